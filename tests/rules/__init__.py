"""Tests of the rules engine (moon_sdk.rules) against docs/rules.md."""

"""Bots as folders: the manifest (bot.toml), versions (content hashes), builds, starters."""

"""Generated stubs for package moon.v1 (proto/moon/v1): run `make proto` to regenerate."""

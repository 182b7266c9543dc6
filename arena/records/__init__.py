"""Game records: write, read, verify and print them."""

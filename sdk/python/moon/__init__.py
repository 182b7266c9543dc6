"""Generated protocol code for Moon Arena, one subpackage per protocol version."""

"""Seeing what the compiler did: text and HTML renderings, kernel code, the command line."""

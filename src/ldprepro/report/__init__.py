"""Figures, captions, report tables and the README's generated blocks, all drawn from pipeline output."""

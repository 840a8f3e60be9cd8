"""Pure, Django-free parsers that turn raw incident text into structured signals."""

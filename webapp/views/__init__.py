"""UI and platform views (thin: fetch input, call one function, shape the response)."""

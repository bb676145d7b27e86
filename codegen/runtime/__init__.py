"""Hand-written runtime support, copied verbatim into every generated package."""

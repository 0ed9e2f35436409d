"""Development helpers: the demo's tool server and Home Assistant storage,
and serving an aiohttp app on loopback. Used by `scripts/`, the tests and the
benchmarks; the integration never imports them."""

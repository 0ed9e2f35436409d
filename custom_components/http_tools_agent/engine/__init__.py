"""Declarative HTTP tool engine: pure Python, no Home Assistant import.

Could ship as its own library: templates (``{placeholder}`` URLs and
headers), fields and definitions (parse and validate tools), requests
(definition + arguments -> HTTP request), executor (run it with aiohttp),
speakable (a result as words) and textcalls (tool calls written as text,
streaming markup filter). The rules are in ``docs/``.
"""

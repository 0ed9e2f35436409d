"""A curl command as a tool: `command` reads what curl would send (the
shell's words, curl's options), `draft` makes that request a tool definition
with its secrets taken out and placeholders proposed."""

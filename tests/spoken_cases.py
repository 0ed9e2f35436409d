"""Answers and what is said of them (`tests/test_spoken_text.py`,
`bench/bench_spoken_text.py`). No Home Assistant import: the benchmark
uses them too.
"""

from __future__ import annotations

# Real answers of Qwen2.5-Coder-0.5B asked for markdown (`fixtures/markdown`).
CAPTURED = {
    "pancakes_list": (
        "Pancakes.\nIngredients: Flour, eggs, sugar, milk, butter.\n"
        "Instructions: Mix together flour, eggs, sugar, milk, and butter until "
        "smooth. Add pancake batter to a pan and cook for 15 minutes or until "
        "golden brown. Serve with toppings like cinnamon, nutmeg, or maple syrup."
    ),
    "router_steps": (
        "Resetting Your WiFi Router.\n\n1. Access the Router's Control Panel: "
        "Open your web browser and go to the router's control panel.\n\n"
        "2. Navigate to Wi-Fi Settings:"
    ),
    "recipe_link": "bakery.com",
    "sunny_emoji": "Good day! It's sunny and 24 degrees today.",
    # Only code: its lines are said (better than no answer), not its fence.
    "entity_code": "light.kitchen:\non: true",
}

# Answers in the forms models write (hosted and local ones), each with what
# is said of it.
WRITTEN = [
    (
        "Sure! Here's your list 🛒:\n\n- **Milk** (2 liters)\n- *Eggs*\n"
        "- Flour 🌾\n\nEnjoy your pancakes! 🥞",
        "Sure! Here's your list:\n\nMilk (2 liters).\nEggs.\nFlour.\n\n"
        "Enjoy your pancakes!",
    ),
    (
        "## Weather in Rome\n\nIt's **sunny** ☀️ and 24°C right now.",
        "Weather in Rome.\n\nIt's sunny and 24°C right now.",
    ),
    (
        "You can read the [recipe](https://example.com/lasagna) or see "
        "https://www.bbc.co.uk/food/lasagne.",
        "You can read the recipe or see bbc.co.uk.",
    ),
    (
        "The kitchen light is `light.kitchen`:\n```yaml\nservice: light.turn_on\n"
        "target:\n  entity_id: light.kitchen\n```\nIt is on now.",
        "The kitchen light is light.kitchen:\nIt is on now.",
    ),
    (
        "| Item | Qty |\n|------|-----|\n| Milk | 2 |\n| Eggs | 6 |",
        "Item, Qty\nMilk, 2\nEggs, 6",
    ),
    (
        "1. Unplug the router.\n2. Wait **30 seconds**\n3. Plug it back in",
        "1. Unplug the router.\n2. Wait 30 seconds.\n3. Plug it back in.",
    ),
    (
        "> Note: the bedroom_lamp is ~~off~~ on. 3 * 4 = 12 👍",
        "Note: the bedroom_lamp is off on. 3 * 4 = 12",
    ),
    ("In Rome it is sunny and 14 degrees.", "In Rome it is sunny and 14 degrees."),
]

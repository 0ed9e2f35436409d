"""What the demo's tools answer without a model: each tool's `sentences`
(docs/tool-format.md, "A tool's own sentences"), per language.

The README's requests ("What's the weather in Rome?", "What's on my
shopping list?", "Add bread to the demo shopping list.", "Remove the
bread.", "Send a notification saying the laundry is done.") and the
everyday ways of saying each, in the five languages the agent speaks.
Adding, and removing from a list, name the demo's list ("demo shopping
list"), so Home Assistant's own shopping list keeps "add milk to my
shopping list" and "remove milk from my shopping list" (README,
docs/voice.md); "Remove the bread." names no list. Home
Assistant drops punctuation before matching: none here.
"""

from __future__ import annotations

# tool -> language -> templates (Home Assistant's syntax: [optional],
# (a|b), {parameter}). A wildcard slot takes every word up to what follows
# it: "[today|now]" after {city} keeps "Oslo today" from being a city (Home
# Assistant takes the first match, the one that says the optional words).
SENTENCES: dict[str, dict[str, list[str]]] = {
    "get_weather": {
        "en": [
            "(what's|what is|whats|how's|how is) the weather [like] in {city} [today|now|right now]",
            "(what's|what is) the (temperature|forecast) in {city} [today|now|right now]",
            "[the] weather (in|for) {city} [today|now|right now]",
            "how (hot|cold|warm) is it in {city} [today|now|right now]",
        ],
        "de": [
            "wie ist das wetter in {city} [heute|gerade|jetzt]",
            "wie wird das wetter in {city} [heute|gerade|jetzt]",
            "was macht das wetter in {city} [heute|gerade|jetzt]",
            "wie warm ist es in {city} [heute|gerade|jetzt]",
            "[das] wetter in {city} [heute|gerade|jetzt]",
        ],
        "es": [
            "qué tiempo hace en {city} [hoy|ahora]",
            "(cómo|como) está el tiempo en {city} [hoy|ahora]",
            "qué temperatura hace en {city} [hoy|ahora]",
            "[el] tiempo en {city} [hoy|ahora]",
            "[el] clima en {city} [hoy|ahora]",
        ],
        "fr": [
            "quel temps (fait-il|fait il) à {city} [aujourd'hui|maintenant]",
            "quelle est la météo (à|de) {city} [aujourd'hui|maintenant]",
            "il fait quel temps à {city} [aujourd'hui|maintenant]",
            "[la] météo (à|de) {city} [aujourd'hui|maintenant]",
        ],
        "it": [
            "che tempo fa a {city} [oggi|adesso|ora]",
            "(com'è|come è|com è) il tempo a {city} [oggi|adesso|ora]",
            "che temperatura c'è a {city} [oggi|adesso|ora]",
            "[il] meteo (a|di) {city} [oggi|adesso|ora]",
        ],
    },
    "list_items": {
        "en": [
            "(what's|what is|whats) on [my|the] [demo] shopping list",
            "(read|show) [me] [my|the] [demo] shopping list",
            "what do I have on [my|the] [demo] shopping list",
        ],
        "de": [
            "was steht auf [meiner|der] [demo] einkaufsliste",
            "was ist auf [meiner|der] [demo] einkaufsliste",
            "(zeig|lies) [mir] [meine|die] [demo] einkaufsliste [vor]",
        ],
        "es": [
            "qué hay en [mi|la] lista de (compras|la compra) [demo]",
            "(muéstrame|léeme|lee) [mi|la] lista de (compras|la compra) [demo]",
        ],
        "fr": [
            "qu'est-ce qu'il y a sur [ma|la] liste de courses [démo]",
            "qu'y a-t-il sur [ma|la] liste de courses [démo]",
            "(montre-moi|montre moi|montre|lis-moi|lis moi|lis) [ma|la] liste de courses [démo]",
        ],
        "it": [
            "(cosa|che cosa) c'è (sulla|nella) [mia] lista della spesa [demo]",
            "(mostrami|leggimi|leggi) [la] [mia] lista della spesa [demo]",
        ],
    },
    "add_item": {
        "en": [
            "add {name} to [my|the] demo [shopping] list",
            "put {name} on [my|the] demo [shopping] list",
        ],
        "de": [
            "(füge|füg) {name} (zur|der) demo einkaufsliste hinzu",
            "(setz|setze|schreib|schreibe) {name} auf die demo einkaufsliste",
        ],
        "es": [
            "(añade|agrega|pon|apunta) {name} (a|en) la lista de (compras|la compra) demo",
        ],
        "fr": [
            "(ajoute|mets) {name} (à|sur) [ma|la] liste de courses démo",
        ],
        "it": [
            "(aggiungi|metti) {name} (alla|nella|sulla) lista della spesa demo",
        ],
    },
    "remove_item": {
        "en": [
            "(remove|delete) [the] {name} from [my|the] demo shopping list",
            "take [the] {name} off [my|the] demo shopping list",
            "(remove|delete) the {name}",
        ],
        "de": [
            "(entferne|lösche|streiche) {name} von der demo einkaufsliste",
            "(entferne|lösche) (das|die|den) {name}",
        ],
        "es": [
            "(quita|borra|elimina) {name} de la lista de (compras|la compra) demo",
            "(quita|borra|elimina) (el|la|los|las) {name}",
        ],
        "fr": [
            "(enlève|supprime|retire) {name} de [ma|la] liste de courses démo",
            "(enlève|supprime|retire) (le|la|les) {name}",
        ],
        "it": [
            "(togli|rimuovi|elimina|cancella) {name} dalla lista della spesa demo",
            "(togli|rimuovi|elimina|cancella) (il|la|lo|i|le|gli) {name}",
        ],
    },
    "send_webhook": {
        "en": [
            "send a notification saying {message}",
            "send [a] (notification|message) that says {message}",
            "notify (me|everyone|us) that {message}",
            "tell (me|everyone) on my phone that {message}",
        ],
        "de": [
            "(sende|schick|schicke) eine (benachrichtigung|nachricht) dass {message}",
            "(sende|schick|schicke) eine (benachrichtigung|nachricht) mit {message}",
            "benachrichtige (mich|alle) dass {message}",
        ],
        "es": [
            "(envía|manda) una (notificación|notificacion) (diciendo|que diga) [que] {message}",
            "(avísame|avisa a todos) de que {message}",
        ],
        "fr": [
            "envoie une notification (disant|qui dit) [que] {message}",
            "(préviens-moi|préviens moi|prévenez-moi) que {message}",
        ],
        "it": [
            "(invia|manda) una notifica (che dice|dicendo) [che] {message}",
            "(avvisami|avvisa tutti) che {message}",
        ],
    },
}

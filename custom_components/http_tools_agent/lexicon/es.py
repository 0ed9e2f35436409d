"""Español."""

from ..engine.speakable import ReadOutWords
from ..engine.words import phrase_set, word_set, words
from .base import Lexicon

LEXICON = Lexicon(
    language="es",
    marks=word_set("""
        el los las un una unos unas qué que cuál cuánto cuántos cómo dónde del
        al en con por para es son está están hace hay mi mis tu y o pero no más
        también hoy ahora sí gracias enciende apaga añade agrega quita elimina
        borra envía manda dime muestra lista compra tiempo
    """),
    narration=(
        r"\b(?:llam|invoc|ejecut|us)\w*\s+(?:a\s+)?(?:la\s+|el\s+|una\s+|un\s+)?"
        r"(?:herramienta|funci[oó]n|tool)\b",
        r"\bla\s+herramienta\s+`?\w+_\w+",
    ),
    call_followers=(r"con\b", "llamad"),
    narration_openers=words("llam invoc ejecut utiliz herramienta funci voy vamos"),
    opener_words=words("llam ejecut utiliz herramienta funcion función voy vamos"),
    claims=(
        r"\b(?:he|hemos)\s+(?:ya\s+)?(?:añadid|agregad|eliminad|borrad|quitad|"
        r"enviad|mandad|actualizad|cambiad|encendid|apagad|guardad|puest|avisad)\w*",
        r"\b(?:ha|han)\s+sido\s+(?:añadid|agregad|eliminad|borrad|quitad|enviad|"
        r"mandad|actualizad|cambiad|encendid|apagad|guardad)\w*",
        r"\b(?:está|están)\s+(?:ahora\s+)?(?:encendid|apagad)\w*",
        r"^\W*(?:hecho|listo)\b",
    ),
    action_words=words("""
        añade agrega pon quita elimina borra envía envia manda avisa dile cambia
        actualiza enciende apaga abre cierra inicia crea guarda sube baja
    """),
    info_requests=(r"\b(?:dime|muéstrame|muestrame)\b",),
    question_openers=(
        r"(?:qué|que|cuál|cual|cuáles|cuales|cuánto|cuanto|cuánta|cuántos|cuantos|cuántas)\b",
        r"(?:cómo|como|dónde|donde|cuándo|cuando|quién|quien|por\s+qué)\b",
        r"(?:está|esta|están|estan|hay|es|son|tengo|tiene)\b",
    ),
    request_openers=(
        r"(?:puedes|podrías|podrias|puede|podría|podria)\b",
        r"(?:por\s+favor)\b",
        r"(?:quiero|quisiera|necesito|me\s+gustaría)\b",
    ),
    instruction_echoes=(
        r"\bel\s+usuario\s+(?:preguntó|pregunto|ha\s+preguntado|pregunta)\s*[:\"“«]",
        r"\bresultados?\s+de\s+la\s+herramienta\s+(?:de\s+)?arriba\b",
    ),
    says_failed=(
        r"no (?:puedo|pude|he podido|se pudo|encontr)",
        # The agent's own "Lo siento, no lo hice." and "Eso no se hizo".
        r"no (?:lo )?hice",
        r"no se hizo",
        "error",
    ),
    acts={
        "add": words("añad agreg pon mete crea"),
        "delete": words("elimin borr quit suprim"),
        "update": words("actualiz cambi"),
        "send": words("mand envía envia avis dile notific"),
        "get": words("lee muestr busc"),
        "turn_on": words("encend encien prend abr"),
        "turn_off": words("apag cierr"),
    },
    # A result read out (`engine/speakable.py`).
    read_out=ReadOutWords(
        and_word="y",
        yes="sí",
        no="no",
        nothing="nada",
        items="{count} elementos",
        some_items="{count} de {total} elementos",
        pages_more="primeras {pages} páginas, hay más",
        pages_failed="la página {page} falló",
        decimal=",",
        keys={
            "temperature": "temperatura",
            "temp": "temperatura",
            "humidity": "humedad",
            "wind": "viento",
            "wind speed": "velocidad del viento",
            "pressure": "presión",
            "feels like": "sensación",
            "precipitation": "precipitación",
            "rain": "lluvia",
            "quantity": "cantidad",
            "count": "número",
            "total": "total",
            "deleted": "eliminado",
            "error": "error",
            "received": "recibido",
        },
    ),
    example_markers=("por ejemplo",),
    # Whole answers (a phrase is matched word for word): `turn/hold.py`.
    topics={
        "weather": words("tiempo clima paraguas llueve soleado"),
        "temperature": words("temperatura grados"),
        "list": words("lista"),
    },
    stated_results=(
        r"\bestá vací[ao]\b",
        r"\bnecesitas (?:un )?paraguas\b",
        r"\b(?:está lloviendo|llueve|hace sol)\b",
    ),
    yes=phrase_set("""
        sí | si | claro | vale | ok | okay | de acuerdo | confirmo | confirma |
        correcto | hazlo | adelante | por supuesto | sí por favor
    """),
    no=phrase_set("""
        no | cancela | cancelar | no lo hagas | déjalo | para | no gracias |
        nada
    """),
    fillers=word_set("por favor gracias el código es pin"),
    later=(
        "(en|dentro de) {later} (segundo|segundos|minuto|minutos|hora|horas)",
        "(en|dentro de) (un minuto|una hora|media hora)",
    ),
    joiners=word_set("y e o u"),
)

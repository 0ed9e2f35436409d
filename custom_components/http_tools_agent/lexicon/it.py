"""Italiano."""

from ..engine.speakable import ReadOutWords
from ..engine.words import phrase_set, word_set, words
from .base import Lexicon

LEXICON = Lexicon(
    language="it",
    marks=word_set("""
        il lo gli le un una uno che cosa cos'è c'è di del della dello dei degli
        delle nel nella nello nei negli nelle al alla allo ai agli alle dal
        dalla con per è sono fa fai com'è come quanto quanti quale quali mi ti
        ci non più anche oggi adesso ora sì grazie accendi spegni aggiungi togli
        rimuovi elimina cancella manda invia dimmi mostra lista spesa tempo
    """),
    narration=(
        r"\b(?:chiam|invoc|esegu|us)\w*\s+(?:lo\s+|la\s+|il\s+|l'|un\s+|una\s+)?"
        r"(?:strumento|funzione|tool)\b",
        r"\blo\s+strumento\s+`?\w+_\w+",
    ),
    call_followers=(r"con\b", "chiamat"),
    narration_openers=(
        "chiam",
        "invoc",
        "esegu",
        r"us[ao]\b",
        "strument",
        "funzion",
    ),
    opener_words=words("chiam invoc esegu usa uso strumento funzione"),
    claims=(
        r"\b(?:ho|abbiamo)\s+(?:appena\s+|ora\s+)?(?:aggiunt|rimoss|eliminat|"
        r"cancellat|inviat|mandat|impostat|aggiornat|modificat|acces|spent|"
        r"salvat|messo|tolt|avvisat)\w*",
        r"\b(?:è|e'|sono)\s+stat[oaie]\s+(?:aggiunt|rimoss|eliminat|cancellat|"
        r"inviat|mandat|impostat|aggiornat|modificat|acces|spent|salvat|mess|tolt)\w*",
        r"\b(?:è|sono)\s+(?:ora|adesso)\s+(?:acces|spent|attiv|impostat)\w*",
        r"\b(?:è|sono)\s+(?:acces|spent)[aoie]\b",
        r"^\W*fatto\b",
    ),
    action_words=words("""
        aggiungi metti togli rimuovi elimina cancella manda invia avvisa di' dì
        imposta cambia aggiorna accendi spegni apri chiudi avvia ferma crea
        salva alza abbassa
    """),
    info_requests=(r"\b(?:dimmi|mostrami|fammi\s+sapere)\b",),
    question_openers=(
        r"(?:che|cosa|cos'è|qual|quale|quali|quanto|quanta|quanti|quante)\b",
        r"(?:come|dove|quando|perché|perche|chi)\b",
        r"(?:c'è|ci\s+sono|è|sono|ho|hai|ha)\b",
    ),
    request_openers=(
        r"(?:puoi|potresti|riesci|vorresti|vuoi)\b",
        r"(?:per\s+favore|per\s+piacere)\b",
        r"(?:vorrei|voglio|mi\s+serve|ho\s+bisogno)\b",
    ),
    instruction_echoes=(
        r"\bl'utente\s+(?:ha\s+chiesto|chiede)\s*[:\"“«]",
        r"\brisultat[oi]\s+dello?\s+strument[oi]\s+(?:qui\s+)?sopra\b",
    ),
    says_failed=(
        r"non (?:posso|riesco|sono riuscit|ho potuto|è stat|trovo)",
        # The agent's own "Mi dispiace, non l'ho fatto."
        r"non (?:l'ho|ho) fatto",
        "errore",
    ),
    acts={
        "add": words("aggiung mett inser crea"),
        "delete": words("elimin rimuov cancell togli"),
        "update": words("aggiorn cambi impost modific abbass alza"),
        "send": words("mand invia avvis notific dì di'"),
        "get": words("legg mostr elenc cerc"),
        "turn_on": words("accend apri"),
        "turn_off": words("spegn chiud"),
    },
    # A result read out (`engine/speakable.py`).
    read_out=ReadOutWords(
        and_word="e",
        yes="sì",
        no="no",
        nothing="niente",
        items="{count} elementi",
        some_items="{count} di {total} elementi",
        pages_more="prime {pages} pagine, ce ne sono altre",
        pages_failed="la pagina {page} non è riuscita",
        decimal=",",
        keys={
            "temperature": "temperatura",
            "temp": "temperatura",
            "humidity": "umidità",
            "wind": "vento",
            "wind speed": "velocità del vento",
            "pressure": "pressione",
            "feels like": "percepita",
            "precipitation": "precipitazioni",
            "rain": "pioggia",
            "quantity": "quantità",
            "count": "numero",
            "total": "totale",
            "deleted": "eliminato",
            "error": "errore",
            "received": "ricevuto",
        },
    ),
    example_markers=("ad esempio", "per esempio"),
    # Whole answers (a phrase is matched word for word): `turn/hold.py`.
    topics={
        "weather": words("tempo meteo ombrello piove soleggiato"),
        "temperature": words("temperatura gradi"),
        "list": words("lista"),
    },
    stated_results=(
        r"\bè vuota\b",
        r"\bserve (?:l'|un )?ombrello\b",
        r"\b(?:piove|c'è il sole)\b",
    ),
    yes=phrase_set("""
        sì | si | certo | ok | okay | va bene | confermo | conferma | esatto |
        giusto | fallo | procedi | d'accordo | sì grazie
    """),
    no=phrase_set("""
        no | annulla | non farlo | lascia stare | fermati | stop | no grazie |
        niente
    """),
    fillers=word_set("per favore grazie il codice è lo pin"),
    later=(
        "(tra|fra) {later} (secondo|secondi|minuto|minuti|ora|ore)",
        "(tra|fra) (un minuto|un'ora|mezz'ora|mezzora)",
    ),
    joiners=word_set("e ed o oppure"),
)

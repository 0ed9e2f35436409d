"""Deutsch."""

from ..engine.speakable import ReadOutWords
from ..engine.words import phrase_set, word_set, words
from .base import Lexicon

# Participles that say a change was made ("hinzugefügt", "eingeschaltet").
_DONE = (
    r"(?:hinzugefügt|entfernt|gelöscht|gesendet|geschickt|gesetzt|aktualisiert|"
    r"geändert|erstellt|eingeschaltet|ausgeschaltet|angeschaltet|abgeschaltet|"
    r"gespeichert|benachrichtigt|informiert|eingetragen|gestrichen|gedimmt|"
    r"geöffnet|geschlossen|gestartet|gestoppt)"
)
# A sentence's words up to its participle, none of them a negation.
_UNTIL = r"(?:(?!\bnicht\b|\bkein)[^.!?\n]){0,60}?"

LEXICON = Lexicon(
    language="de",
    marks=word_set("""
        der die das den dem ein eine einen einem einer ist sind wie wer wo wann
        warum welche welcher welches und oder aber nicht bitte ich mir mich mein
        meine meinen meiner dein kannst können könntest wird werden mit von zu
        zum zur im auf für gibt heute jetzt morgen schalte schalt mach füge
        hinzu entferne lösche sende schick sag zeig einkaufsliste wetter licht
        setze artikel stück regnet geht dir hallo
    """),
    narration=(
        r"\b(?:ruf\w*|aufruf\w*|aufgerufen|verwend\w*|benutz\w*|nutz\w*|"
        r"führ\w*|ausführ\w*|ausgeführt)\s+(?:das\s+|die\s+|den\s+|dem\s+|"
        r"ein\s+|eine\s+|einen\s+)?(?:`?\w+`?\s+)?(?:tool|werkzeug|funktion)\w*",
        r"\b(?:tool|werkzeug|funktion)s?-?\s*aufruf\w*",
        r"\baufgerufen\s+mit\b",
        r"\b(?:das|dem|den|die)\s+(?:tool|werkzeug|funktion)\s+`?\w+_\w+",
    ),
    call_followers=(r"mit\b", "aufgerufen"),
    narration_openers=(
        r"ich\b",
        r"lass\b",
        "ruf",
        "aufruf",
        "verwend",
        "benutz",
        "nutz",
        "führ",
        "werkzeug",
        "funktion",
    ),
    opener_words=words("""
        ich lass ruf aufruf verwend benutz nutz führ werkzeug funktion
    """),
    claims=(
        r"\b(?:ich\s+habe|habe\s+ich|ich\s+hab|wir\s+haben)\b"
        + _UNTIL
        + rf"\b{_DONE}\b",
        r"\b(?:wurde|wurden|ist|sind)\s+" + _UNTIL + rf"\b{_DONE}\b",
        r"\b(?:ist|sind)\s+(?:jetzt|nun)\s+(?:an|aus|ein|auf\s+der\s+\w*liste)\b",
        rf"\berfolgreich\s+{_DONE}\b",
        r"^\W*(?:erledigt|fertig|gemacht)\b",
    ),
    action_words=words("""
        füge hinzufügen setze setz lösche löschen entferne entfernen streiche
        nimm sende senden schicke schick schicken benachrichtige sag stell
        ändere ändern aktualisiere schalte schalt einschalten ausschalten
        anschalten mach mache öffne öffnen schließe schließ schließen starte
        stoppe dimme erhöhe verringere erstelle speichere kaufe trag trage leere
        erinnere
    """),
    info_requests=(
        r"\b(?:sag|sage|zeig|zeige|nenn|nenne|gib)\s+mir\b",
        r"\blass\s+mich\s+wissen\b",
    ),
    question_openers=(
        r"(?:ist|sind|war|waren|hat|haben|gibt|läuft|brennt)\b",
        r"(?:was|welche|welcher|welches|wer|wo|wann|wie|warum|wieso)\b",
    ),
    request_openers=(
        r"(?:kannst|könntest|koenntest|kann|könnte|würdest|wuerdest)\b",
        r"(?:bitte)\b",
        r"(?:ich\s+möchte|ich\s+will|ich\s+brauche)\b",
    ),
    instruction_echoes=(
        r"\b(?:der\s+)?(?:benutzer|nutzer)\s+(?:hat\s+gefragt|fragt)\s*[:\"“„«]",
        r"\b(?:tool|werkzeug)-?(?:ergebnisse?|antworten?)\s+(?:oben|von\s+oben)\b",
        r"\bbeantworte\s+die\s+frage\s+des\s+(?:benutzers|nutzers)\b",
    ),
    says_failed=(
        r"(?:konnte|kann|könnte)\w*\s+(?:\w+\s+){0,5}?nicht",
        r"nicht (?:möglich|gefunden|erreichbar|geklappt|funktioniert)",
        r"hat nicht (?:geklappt|funktioniert)",
        # The agent's own "das habe ich nicht getan", "Das ist nicht passiert".
        r"nicht getan",
        r"nicht passiert",
        "fehlgeschlagen",
        "fehler",
        r"kein(?:e|en)? (?:gerät|entität)",
    ),
    acts={
        "add": words("füge hinzu setz trag eintrag erstell neue"),
        "delete": words("lösch entfern streich nimm weg"),
        "update": words("änder aktualisier einstell setz dimm erhöh"),
        "send": words("schick benachrichtig sag informier meld"),
        "get": words("zeig lies suche prüf nenn"),
        "turn_on": words("ein einschalt anschalt öffne aufmach"),
        "turn_off": words("aus ausschalt abschalt schließ schliess"),
    },
    # A result read out (`engine/speakable.py`).
    read_out=ReadOutWords(
        and_word="und",
        yes="ja",
        no="nein",
        nothing="nichts",
        items="{count} Einträge",
        some_items="{count} von {total} Einträgen",
        pages_more="erste {pages} Seiten, es gibt mehr",
        pages_failed="Seite {page} schlug fehl",
        decimal=",",
        keys={
            "temperature": "Temperatur",
            "temp": "Temperatur",
            "humidity": "Luftfeuchtigkeit",
            "wind": "Wind",
            "wind speed": "Windgeschwindigkeit",
            "pressure": "Luftdruck",
            "feels like": "gefühlt",
            "precipitation": "Niederschlag",
            "rain": "Regen",
            "quantity": "Menge",
            "count": "Anzahl",
            "total": "gesamt",
            "deleted": "gelöscht",
            "error": "Fehler",
            "received": "empfangen",
        },
    ),
    example_markers=(r"z\.\s?B\.", "zum Beispiel", "beispielsweise"),
    common=word_set("""
        eine einen einem einer sind nicht bitte welche welcher welches heute
        jetzt wird werden kann kannst
    """),
    # Whole answers (a phrase is matched word for word): `turn/hold.py`.
    topics={
        "weather": words("wetter regenschirm regnet sonnig bewölkt"),
        "temperature": words("temperatur temperaturen grad"),
        "list": words("liste einkaufsliste"),
    },
    stated_results=(
        r"\bist leer\b",
        r"\bkeine artikel\b",
        r"\bbrauchs?t (?:keinen|einen) regenschirm\b",
        r"\bes (?:regnet|ist sonnig|ist bewölkt)\b",
    ),
    yes=phrase_set("""
        ja | jawohl | klar | sicher | ok | okay | genau | richtig | mach das |
        mach es | bestätige | bestätigt | ja bitte | gerne
    """),
    no=phrase_set("""
        nein | nee | abbrechen | stopp | halt | lieber nicht | nicht |
        nein danke | vergiss es
    """),
    fillers=word_set("bitte danke der ist mein pin code"),
    later=(
        "in {later} (sekunde|sekunden|minute|minuten|stunde|stunden)",
        "in (einer|einer halben) (minute|stunde)",
    ),
    joiners=word_set("und oder"),
)

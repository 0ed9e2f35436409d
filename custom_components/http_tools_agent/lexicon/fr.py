"""Français."""

from ..engine.speakable import ReadOutWords
from ..engine.words import phrase_set, word_set, words
from .base import Lexicon

# An apostrophe as French is typed: straight or curly.
_A = "['\u2019]"

LEXICON = Lexicon(
    language="fr",
    marks=word_set("""
        les une des du au aux est sont c'est quel quelle quels quelles combien
        où pourquoi quand et ou mais pas je vous moi mon ton votre s'il plaît
        merci aujourd'hui maintenant allume éteins ajoute supprime enlève retire
        envoie dis montre courses météo fait dans sur avec pour ce cette ça
        qu'est lumière liste temps à chaud pleut l'article quantité mets pièces
        bonjour
    """),
    narration=(
        r"\b(?:appel\w*|invoqu\w*|ex[ée]cut\w*|utilis\w*)\s+"
        rf"(?:l{_A}|la\s+|le\s+|les\s+|un\s+|une\s+|des\s+)?(?:`?\w+`?\s+)?"
        r"(?:outil|fonction|tool)s?\b",
        rf"\bappels?\s+(?:de\s+|d{_A}|à\s+)?(?:l{_A}|la\s+)?(?:outil|fonction)s?\b",
        r"\bappel[ée]e?s?\s+avec\b",
        rf"\b(?:l{_A}|la\s+)(?:outil|fonction)\s+`?\w+_\w+",
    ),
    call_followers=(r"avec\b", r"appel[ée]"),
    narration_openers=(
        r"je\b",
        rf"j{_A}",
        "appel",
        "invoqu",
        r"ex[ée]cut",
        "utilis",
        "outil",
        "fonction",
    ),
    opener_words=words("je j' appel invoqu exécut execut utilis outil fonction"),
    claims=(
        rf"\b(?:j{_A}ai|nous\s+avons)\s+(?:bien\s+|déjà\s+|maintenant\s+)?"
        r"(?:ajout|supprim|retir|enlev|effac|envoy|mis|modifi|chang|réglé|allum|"
        r"éteint|enregistr|prévenu|averti|notifi|informé|créé)\w*",
        r"\b(?:a|ont)\s+(?:bien\s+)?été\s+(?:ajout|supprim|retir|enlev|effac|envoy|"
        r"modifi|chang|mis|allum|éteint|enregistr|cré|prévenu|averti|notifi)\w*",
        r"\b(?:est|sont)\s+(?:maintenant\s+|désormais\s+|bien\s+)?"
        r"(?:allumée?s?|éteinte?s?|ajoutée?s?|supprimée?s?)(?!\w)",
        rf"^\W*(?:c{_A}est\s+fait|fait|terminé)(?!\w)",
    ),
    action_words=words("""
        ajoute ajouter ajoutez mets mettre mettez supprime supprimer supprimez
        enlève enlever retire retirer efface envoie envoyer envoyez préviens
        prévenir dis dites règle régler modifie modifier allume allumer allumez
        éteins éteindre éteignez ouvre ouvrir ferme fermer démarre lance arrête
        crée créer enregistre achète baisse augmente diminue
    """),
    info_requests=(
        r"\b(?:dis|dites|montre|montrez|donne|donnez)[-\s]+(?:moi|nous)\b",
        r"\bfais[-\s]+moi\s+savoir\b",
    ),
    question_openers=(
        r"(?:est-ce|est-il|est-elle|sont-ils|sont-elles|y\s+a-t-il)\b",
        r"(?:quel|quelle|quels|quelles|qu'est-ce|que|qui|où|quand|comment|combien|pourquoi)\b",
        r"(?:la|le|les)\s+\w+\s+est-(?:il|elle)\b",
    ),
    request_openers=(
        r"(?:peux-tu|pouvez-vous|pourrais-tu|pourriez-vous|tu\s+peux|vous\s+pouvez)\b",
        r"(?:s'il\s+te\s+plaît|s'il\s+vous\s+plaît)\b",
        r"(?:je\s+veux|je\s+voudrais|j'aimerais)\b",
    ),
    instruction_echoes=(
        rf"\bl{_A}utilisateur\s+(?:a\s+demandé|demande)\s*[:\"“«]",
        rf"\brésultats?\s+de\s+l{_A}outil\s+ci-dessus\b",
        rf"\bréponds?\s+à\s+la\s+question\s+de\s+l{_A}utilisateur\b",
    ),
    says_failed=(
        rf"n{_A}ai\s+pas\s+pu",
        r"ne\s+(?:peux|peut|pouvais|pouvons|trouve)\s+pas",
        r"pas\s+(?:pu|réussi|trouvé)",
        # The agent's own "je ne l'ai pas fait", "Cela n'a pas eu lieu".
        rf"ne\s+l{_A}ai\s+pas\s+fait",
        rf"n{_A}a\s+pas\s+eu\s+lieu",
        rf"(?:c{_A}est|il\s+est)\s+impossible",
        "échec",
        "échou",
        "erreur",
        r"aucune? (?:appareil|entité)",
        "introuvable",
    ),
    acts={
        "add": words("ajout mets met insér crée nouv"),
        "delete": words("supprim enlèv enlev retir effac ôte"),
        "update": words("modifi chang règl régl augment diminu baiss"),
        "send": words("envoi envoy prévien préven avert dis"),
        "get": words("montr affich lis cherch trouv vérifi"),
        "turn_on": words("allum ouvr démarr lanc"),
        "turn_off": words("étein éteign ferm arrêt coupe"),
    },
    # A result read out (`engine/speakable.py`).
    read_out=ReadOutWords(
        and_word="et",
        yes="oui",
        no="non",
        nothing="rien",
        items="{count} éléments",
        some_items="{count} sur {total} éléments",
        pages_more="{pages} premières pages, il y en a d'autres",
        pages_failed="la page {page} a échoué",
        decimal=",",
        keys={
            "temperature": "température",
            "temp": "température",
            "humidity": "humidité",
            "wind": "vent",
            "wind speed": "vitesse du vent",
            "pressure": "pression",
            "feels like": "ressenti",
            "precipitation": "précipitations",
            "rain": "pluie",
            "quantity": "quantité",
            "count": "nombre",
            "total": "total",
            "deleted": "supprimé",
            "error": "erreur",
            "received": "reçu",
        },
    ),
    example_markers=("par exemple", r"p\.\s?ex\."),
    common=word_set("""
        avec pour dans quel quelle quels quelles sont cette comment combien
        outil outils
    """),
    # Whole answers (a phrase is matched word for word): `turn/hold.py`.
    topics={
        "weather": words("temps météo parapluie pleut ensoleillé"),
        "temperature": words("température degrés"),
        "list": words("liste"),
    },
    stated_results=(
        r"\best vide\b",
        r"\bbesoin d'(?:un )?parapluie\b",
        r"\bil (?:pleut|fait beau)\b",
    ),
    yes=phrase_set("""
        oui | ouais | bien sûr | d'accord | ok | okay | vas-y | vas y | confirme |
        confirmé | exact | c'est ça | oui merci | volontiers
    """),
    no=phrase_set("""
        non | annule | annuler | arrête | stop | surtout pas | non merci |
        laisse tomber
    """),
    fillers=word_set("s'il te vous plaît merci le est code pin"),
    later=(
        "dans {later} (seconde|secondes|minute|minutes|heure|heures)",
        "dans (une minute|une heure|une demi-heure|une demi heure)",
    ),
    joiners=word_set("et ou"),
)

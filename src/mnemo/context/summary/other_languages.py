"""What the summary reads in Spanish, French, German, Italian, Portuguese and Dutch (C18).

``salience.py`` knows English and Chinese by their words and phrases. A chat in another
language kept its thanks and greetings as notes, and what someone may not eat weighed as
any remark: by hand, a summary of a Spanish chat in a 3,072-token window held "¡Muchas
gracias por la ayuda!" and "Gracias, muy útil." beside the user's budget and the date of
a wedding. This module reads the same kinds of text in the six European languages most
often written to an assistant after English.

* ``is_foreign_phatic(sentence, skip)`` — chit-chat: thanks and the replies to them,
  greetings and leave-takings, agreement, praise and wishes, and an AI assistant's
  offers and closings ("Si tienes más preguntas, no dudes en preguntar."). True when
  the sentence holds a cue of one of these languages — a phatic phrase (``_PHRASES``)
  or a word that only chit-chat uses there (``_CUES``: "gracias", "merci", "danke") —
  and, its phrases taken out, every word left is a phatic word or a function word of
  these languages (``_PHATIC``, ``_FUNCTION``), or one of ``skip`` (the English ones
  and the participants' names), with no number. So "Gracias, el vuelo sale a las 9."
  says something, and an English sentence with a German article in it ("Super, the
  war was over") has no cue. Such a sentence opens with a word of these lists, and
  only one whose first content word or first word is one (``may_be_foreign_phatic``)
  is searched: an English one costs a set lookup.
* ``FOREIGN_DIET`` and ``FOREIGN_LIMITATION`` — what someone must not eat ("es
  alérgico al marisco", "isst kein Fleisch") or cannot do ("hat Höhenangst", "usa una
  silla de ruedas"), which binds every suggestion to come as their English forms do
  (``salience.is_dietary``, ``salience.is_limitation``).
* ``FOREIGN_KNOWS_NOTHING`` — an AI assistant's word that it has no access or
  information ("Como assistente, não tenho acesso a informações sobre …"), no note
  (``salience.knows_nothing``).
* ``FOREIGN_STANDING_RULE`` — a rule for the answers to come ("Prefiero respuestas
  cortas", "Bitte antworte kurz", "À partir de maintenant, appelle-moi Jo"), which an AI
  assistant's summary keeps under Constraints & Preferences (``salience.is_standing_rule``).
* ``foreign_value_swaps`` and ``foreign_updates`` — a correction of a day, a month or an
  amount ("… ahora es el viernes, no el jueves", "von Donnerstag auf Freitag
  verschoben", "Das Budget ist jetzt 450 Euro."), which marks or takes back the older
  line as an English one does (``salience.value_swaps``, ``salience.updated_things``);
  ``foreign_statements`` reads what a sentence says a thing is. An English sentence
  passes both at the cost of a split and a set lookup.
"""

from __future__ import annotations

import re
from collections.abc import Set as AbstractSet
from functools import lru_cache

from mnemo.context.summary.dates import OTHER_CALENDAR_WORDS, OTHER_WEEKDAYS, alternation
from mnemo.languages import ENGLISH_HOMOGRAPHS, FUNCTION_WORDS, LOWER_CASE_FUNCTION_WORDS

__all__ = ["CAPITALISED_CALENDAR_WORDS", "FOREIGN_DIET", "FOREIGN_KNOWS_NOTHING",
           "FOREIGN_LIMITATION", "FOREIGN_STANDING_RULE", "calendar_kind",
           "foreign_statements", "foreign_updates", "foreign_value_swaps", "foreign_values",
           "is_day_number", "is_foreign_phatic", "is_foreign_rule",
           "may_be_foreign_phatic"]

_WORD_CHARS = r"[^\W\d_]+"
# Whole phrases, taken out before the words are looked at: their words also carry facts
# elsewhere ("la ayuda de mi hermano", "bis morgen früh").
_PHRASES = re.compile(
    r"(?:"
    # Wishes and congratulations for what the listener does, which their own words
    # tell: "¡Buena suerte con la boda!", "Felicidades a Javier!", "Viel Erfolg bei der
    # Prüfung!" (as "Good luck with the wedding!" in English). First: the alternation
    # takes the first branch that fits, and "bonne chance" alone would leave the rest.
    rf"(?:buena suerte|bonne chance|viel (?:glück|gluck|erfolg)|buona fortuna|boa sorte"
    rf"|veel succes) (?:con|en|para|pour|avec|bei|mit|für|fur|per|com|na|no|em|met|bij)"
    rf"(?: {_WORD_CHARS}){{1,3}}(?=[\s!.…]*$)"
    rf"|(?:felicidades|enhorabuena|félicitations|felicitations|(?:herzlichen )?glückwunsch"
    rf"|complimenti|auguri|parabéns|parabens|gefeliciteerd)(?: (?:a|al|por|para|à|pour|zu"
    rf"|zum|zur|per|pela|pelo|ao|met)(?: {_WORD_CHARS}){{1,3}})?(?=[\s!.…]*$)"
    # An AI assistant's offers, apologies and the lines that only open a list, as in
    # English ("I'm happy to help with your request.", "Here are the details:"): by
    # hand the embedded model's "Estoy feliz en poder ayudarte con tu solicitud." and
    # "Aquí tienes las explicaciones detalladas:" outranked the user's budget.
    rf"|(?:aquí|aqui) (?:tienes|tiene|está|esta|están|estan|va|vai|vão|estão)"
    rf"(?: {_WORD_CHARS}){{0,5}}(?= *: *$)|(?:voici|voilà|ecco)(?: {_WORD_CHARS}){{0,5}}"
    rf"(?= *: *$)|hier (?:ist|sind|is|zijn)(?: {_WORD_CHARS}){{0,5}}(?= *: *$)"
    r"|(?:estoy |me siento |sono |fico |je suis )?(?:muy |très |molto |muito )?(?:feliz"
    r"|felice|encantad[oa]|content[oa]|contente|ravie?|heureux|heureuse) (?:de|en|di|em)"
    r" (?:poder |pouvoir |potere )?(?:ayudar(?:te|le|os)?|asistir(?:te|le)?|vous aider"
    r"|t'aider|aiutar(?:ti|la|vi)?|ajudar(?:-te|-lo|-la)?)(?: (?:con|avec|com|con) (?:tu|su"
    r"|ta|votre|la tua|sua|a sua) (?:solicitud|pregunta|consulta|demande|question"
    r"|richiesta|domanda|pedido|pergunta))?"
    r"|(?:ich )?helfe (?:dir|ihnen|euch) gerne|(?:ik )?help (?:je|u) graag"
    # "Natürlich, ich kann Ihnen helfen!" (by hand, the embedded model in German).
    r"|(?:(?:claro|por supuesto|bien sûr|bien sur|natürlich|naturlich|klar|gerne|certo"
    r"|certamente|naturalmente|com certeza|natuurlijk|zeker),? )?(?:que )?(?:yo |eu )?"
    r"(?:puedo|je peux|ich kann|posso|ik kan) (?:ayudarte|ayudarle|te ayudar|vous aider"
    r"|t'aider|dir helfen|ihnen helfen|euch helfen|aiutarti|aiutarla|te ajudar|ajudar"
    r"|je helpen|u helpen)"
    r"|(?:lamento|siento|perdón|perdon|disculpa|disculpe|désolée?|desolee?|entschuldigung"
    r"|scusa|scusate|desculpe|sorry)(?: (?:por|pour|für|per|pela|voor))?"
    r" (?:la|el|les|die|das|den|il|lo|a|o|de|the) (?:confusión|confusion|confusione|confusão"
    r"|confusao|malentendido|malentendu|verwirrung|missverständnis|verwarring)"
    r"|(?:en |con )?(?:qué|que) (?:más |mas )?(?:puedo|te puedo|le puedo) (?:ayudar|asistir)"
    r"(?:te|le)?(?: hoy)?|comment puis-je (?:vous|t') ?aider(?: aujourd'hui)?"
    r"|wie kann ich (?:dir|ihnen|euch) (?:heute )?helfen|come posso (?:aiutarti|aiutarla"
    r"|esserti utile)(?: oggi)?|como posso (?:te |lhe )?ajudar(?: hoje)?"
    r"|hoe kan ik (?:je|u) (?:vandaag )?helpen"
    # Spanish
    r"|(?:muchas|muchísimas|muchisimas|mil) gracias|gracias (?:por|de) (?:todo|(?:la|tu|su"
    r"|vuestra|el|los|las|tus|sus) (?:ayuda|información|informacion|consejos?|respuestas?"
    r"|tiempo|apoyo|paciencia|sugerencias?|ideas?|explicación|explicacion"
    r"|recomendaciones?))|de nada|no hay de qué|no hay de que|por favor"
    r"|hasta (?:luego|pronto|mañana|manana|la vista|la próxima|la proxima)"
    r"|buen(?:os|as)? (?:días|dias|tardes|noches|viaje|provecho|fin de semana)"
    r"|que (?:te|le|os) vaya bien|me alegr[oa](?: mucho)?(?: por ti)?|mucho gusto"
    r"|(?:qué|que|muy) bien|de acuerdo|no te preocupes|no hay problema|buena suerte"
    r"|qué tal|que tal"
    r"|(?:espero|ojalá|ojala) que (?:esto|eso|esta información|esta informacion|la información"
    r"|la informacion|estos consejos|estas ideas)? ?(?:te|le|os)? ?(?:ayude|ayuden|sirva"
    r"|sirvan|sea útil|sea util|sea de ayuda)"
    r"|si (?:tienes|tiene|tenéis|necesitas|necesita) (?:alguna|cualquier|más|mas|otra|otras"
    r"|algo)(?: otra| más| mas)? (?:pregunta|preguntas|duda|dudas|ayuda|cosa)"
    r"|(?:o )?(?:necesitas|necesita|quieres) (?:algo|ayuda)(?: más| mas)?"
    # … and its gladness that it helped: "También me alegra saber que te ayudó."
    r"|(?:también |tambien )?me alegra (?:saber|ver|oír|oir) que (?:te|le|os)"
    r" (?:ayud[óoe]|sirv(?:ió|io|a|e)|gust(?:ó|o|e|a))"
    r"|no dudes en (?:preguntar(?:me)?|contactarme|escribirme|decírmelo|decirmelo)"
    r"|(?:estoy )?aquí para ayudar(?:te|le)?|aqui para ayudar(?:te|le)?"
    r"|(?:estou )?aqui para (?:te )?ajudar(?: você| voce)?(?: hoje)?"
    r"|(?:sono )?qui per aiutarti|(?:je suis )?(?:là|la) pour (?:vous|t')aider"
    r"|(?:ich bin )?(?:hier|da),? um (?:dir|ihnen|euch) zu helfen"
    r"|(?:ik ben )?hier om (?:je|u) te helpen"
    r"|se (?:hai|avete) bisogno di (?:[^\W\d_]+ )?(?:aiuto|assistenza|altro|qualcos'altro)"
    r"(?: o (?:assistenza|assistente|aiuto)(?: specific[oa])?)?(?: per (?:un|qualsiasi)"
    r" altro (?:problema|argomento|motivo))?(?: in futuro)?"
    r"|en qué (?:más )?(?:puedo|te puedo|le puedo) ayudar(?:te|le)?"
    r"|en que (?:mas )?(?:puedo|te puedo|le puedo) ayudar(?:te|le)?"
    # French
    # (One branch, its parts optional: the alternation takes the first branch that fits,
    # and "merci beaucoup" alone left "pour ton aide" of "Merci beaucoup pour ton aide !")
    r"|merci(?: beaucoup| bien| mille fois| infiniment)?(?: (?:pour|de) (?:tout|(?:ton|ta|tes"
    r"|votre|vos|l'|le|la|les) ?(?:aide|conseils?|réponses?|reponses?|temps|soutien"
    r"|patience|informations?|explications?|idées|idees|suggestions?)))?"
    r"|(?:ou )?(?:si (?:vous avez|tu as) )?besoin d'(?:aide|autre chose)(?: (?:à|a|sur|avec|pour)"
    r" (?:un|une|d'|l') ?(?:autre )?(?:sujet|chose|question))?"
    r"|n'(?:hésitez|hesitez|hésite|hesite) pas(?: à| a)? (?:me|nous)? ?(?:le |la |les )?"
    r"(?:poser|demander|contacter|écrire|ecrire)"
    r"|de rien|avec plaisir|je vous en prie|je t'en prie|pas de (?:problème|probleme|souci)"
    r"|à bientôt|a bientot|à plus tard|à demain|a demain|au revoir"
    r"|bonne (?:journée|journee|soirée|soiree|nuit|chance|continuation|route|fin de semaine)"
    r"|bon (?:week-end|weekend|voyage|courage|appétit|appetit)|ça marche|ca marche"
    r"|c'est (?:génial|genial|super|parfait|top|gentil|noté|note|compris)"
    r"|(?:j'espère|j'espere) que (?:cela|ça|ca|ceci|ces (?:conseils|informations))"
    r" (?:vous|t')? ?(?:aide|aidera|aideront|sera utile)"
    r"|n'hésitez pas|n'hesitez pas|n'hésite pas|n'hesite pas|bien sûr|bien sur|por supuesto"
    r"|si vous avez (?:d'autres|des) questions|si tu as (?:d'autres|des) questions"
    r"|comment (?:allez-vous|vas-tu|ça va|ca va)|ça va|ca va"
    # German
    r"|vielen (?:lieben )?dank(?: für (?:deine|ihre|eure|die) (?:hilfe|antwort|tipps"
    r"|geduld|unterstützung|unterstutzung|infos?|informationen|zeit))?"
    r"|danke (?:schön|schon|sehr|dir|ihnen|euch)|gern geschehen|gerne geschehen|bitte schön"
    r"|bis (?:bald|später|spater|morgen|dann|zum nächsten mal)|auf wiedersehen"
    r"|guten (?:morgen|tag|abend)|gute nacht|schönen (?:tag|abend)|viel (?:glück|gluck|erfolg"
    r"|spaß|spass)|alles (?:klar|gute)|kein problem|keine sorge|das (?:klingt|ist) (?:toll"
    r"|super|gut|großartig|grossartig|prima|spannend|interessant|klasse)"
    r"|(?:ich )?hoffe,? (?:das|dies|es) hilft(?: dir| ihnen| euch)?(?: weiter)?"
    r"|wenn (?:du|sie) (?:noch )?(?:weitere |andere )?fragen (?:hast|haben)"
    r"|wie geht(?:'s| es)(?: dir| ihnen)?"
    # Italian
    r"|grazie (?:mille|tante|infinite|di tutto|per (?:l'aiuto|il tuo aiuto|il suo aiuto"
    r"|i consigli|la risposta|le informazioni|il tempo|la pazienza))"
    r"|di niente|figurati|prego|a (?:presto|dopo|domani)|buona? (?:giornata|serata|notte"
    r"|fortuna|viaggio|appetito|lavoro)|va bene|d'accordo|nessun problema|che bello"
    r"|spero che (?:questo|questa|queste|ciò|cio) (?:ti|le|vi)? ?(?:aiuti|sia utile|serva)"
    r"|se hai (?:altre|delle) domande|non esitare a (?:chiedere|contattarmi)|come stai"
    # Portuguese
    r"|muito obrigad[oa]s?|obrigad[oa]s? (?:pela|pelo|por) (?:ajuda|informação|informacao"
    r"|dicas?|resposta|tempo|apoio|paciência|paciencia|tudo)|de nada|por nada"
    r"|até (?:logo|mais|amanhã|amanha|breve)|ate (?:logo|mais|amanha|breve)"
    r"|bo(?:m|a) (?:dia|tarde|noite|sorte|viagem|fim de semana|trabalho)|tudo bem|tudo bom"
    r"|sem problema|espero que (?:isso|isto|essas dicas) (?:te |lhe )?(?:ajude|sirva|seja útil"
    r"|seja util)|se (?:tiver|você tiver|voce tiver|tiveres) (?:mais |outras )?(?:perguntas"
    r"|dúvidas|duvidas)|é só perguntar|e so perguntar"
    # Dutch
    r"|dank (?:je|u) (?:wel|zeer)|hartelijk dank|bedankt voor (?:je|jouw|uw|de) (?:hulp"
    r"|tips?|antwoord|advies|uitleg|geduld|info|informatie|tijd)|graag gedaan|geen probleem"
    r"|tot (?:ziens|straks|later|morgen|de volgende keer)|fijne (?:dag|avond|reis)"
    r"|goede(?:morgen|middag|navond|nacht)|goedemorgen|veel (?:succes|plezier|sterkte)"
    r"|ik hoop dat (?:dit|dat) (?:je |u )?helpt|als je (?:nog )?(?:meer |andere )?vragen hebt"
    r"|laat (?:het )?(?:me|mij) (?:het )?weten|hoe gaat het(?: met je| met jou| met u)?"
    r")(?![^\W\d_])",
    re.IGNORECASE,
)
# Words that only chit-chat uses in these languages, none an English word: one of them
# (or a phrase) must be there.
_CUES = frozenset("""
gracias hola adiós adios chao genial estupendo estupenda perfecto perfecta vale claro
felicidades enhorabuena jaja jajaja jeje entendido encantado encantada bienvenido
bienvenida saludos abrazos cuídate cuidate agradezco agradecido agradecida
merci bonjour bonsoir salut coucou génial parfait parfaite félicitations felicitations
sympa chouette volontiers bisous entendu ravi ravie bienvenue voilà voila
danke dankeschön bitte hallo tschüss tschüs tschuss servus moin toll klasse prima perfekt
wunderbar großartig grossartig glückwunsch gluckwunsch herzlichen hilfreich willkommen
grazie ciao salve arrivederci buongiorno buonasera buonanotte perfetto perfetta ottimo
ottima bellissimo bellissima complimenti auguri benissimo benvenuto benvenuta
obrigado obrigada obrigados brigado olá tchau ótimo otimo ótima otima perfeito perfeita
legal bacana maravilhoso maravilhosa incrível incrivel parabéns parabens valeu beleza
combinado beijos kkk
dankjewel dankuwel bedankt hoi doei fijn leuk geweldig fantastisch uitstekend
gefeliciteerd sterkte gezellig groetjes inderdaad goedemorgen goedemiddag goedenavond
goedenacht
""".split())  # noqa: SIM905 - a word list reads better as text
# Words of praise, agreement and feeling that tell nothing alone, besides the cues.
_PHATIC = _CUES | frozenset("""
bueno buena buenos buenas bien excelente fantástico fantastico maravilloso maravillosa
increíble increible guay bonito bonita precioso preciosa encanta suerte entiendo útil
util interesante gusto alegro alegra divertido abrazo nada acuerdo exacto cierto verdad
totalmente seguro amable ayuda
super excellent excellente magnifique formidable bravo chance oui accord bon bonne top
incroyable intéressant interessant utile plaisir rien compris amitiés cordialement ben
bah exactement absolument vraiment tellement beaucoup content contente heureux heureuse
joli jolie belle beau trop gentil
dank vielen schön gut gerne gern geschehen glück gluck viel bald alles klar genau stimmt
richtig freut freue interessant schade ach tag abend nacht grüße grüsse gruß liebe
mille bene certo certamente esatto capito piacere contento contenta felice aiuto bello
bella brava tante
bom boa bem dia tarde noite sorte certo prazer abraço feliz interessante sim entendi
util tranquilo
top mooi goed helemaal klopt precies handig welkom nou echt heel erg wel plezier succes
ja oké oke
ok okay oh ah wow haha hey
aide hilfe ajuda hulp natürlich naturlich naturalmente certamente natuurlijk zeker sûr
""".split())  # noqa: SIM905
# Articles, prepositions, pronouns and the commonest verbs and adverbs: English words
# among them too, since a sentence read here is in one of these languages.
_FUNCTION = FUNCTION_WORDS | ENGLISH_HOMOGRAPHS | LOWER_CASE_FUNCTION_WORDS
# What a caller looks up before it asks: any word that may stand in such a sentence.
FOREIGN_WORDS = _PHATIC | _FUNCTION | frozenset(
    w.lower() for w in re.findall(r"[^\W\d_]+", _PHRASES.pattern.replace("(?:", " ")))
# … and those of them that are no English word: what an English sentence never opens with.
_OPENERS = FOREIGN_WORDS - ENGLISH_HOMOGRAPHS - frozenset("""
ok okay oh ah wow haha hey super top excellent bravo formidable chance bon ben bah trop
bella tag abend show
""".split())  # noqa: SIM905
_WORD = re.compile(r"[^\W\d_]+|\d+")
_FIRST = re.compile(r"[\W_]*([^\W\d_]+)")


def may_be_foreign_phatic(word: str, sentence: str) -> bool:
    """Whether ``sentence``, whose first content word by the English rules is ``word``,
    is worth the search of ``is_foreign_phatic``: that word is one of these languages',
    or the sentence opens with a word no English sentence opens with ("Bonjour Marie !":
    "bonjour" passes in English for a word of "bon voyage"). An English sentence costs a
    set lookup and a match at its start."""
    if word in FOREIGN_WORDS:
        return True
    first = _FIRST.match(sentence)
    return first is not None and first.group(1).lower() in _OPENERS


# A name the sentence is said to: after a comma at its end ("Gracias, Marco!"), or after
# a greeting at its start ("Hola Marco, …").
_VOCATIVE = re.compile(
    r",\s*[A-ZÀ-ÖØ-Þ][^\W\d_]{1,20}(?:\s+(?:y|e|et|und|en)\s+[A-ZÀ-ÖØ-Þ][^\W\d_]{1,20})?"
    r"(?=[\s!.?…]*$)"
    r"|^[¡¿\s]*(?i:hola|hi|hey|bonjour|salut|hallo|ciao|olá|ola|oi|hoi|gracias|merci|danke"
    r"|grazie|obrigad[oa]|bedankt)\s+[A-ZÀ-ÖØ-Þ][^\W\d_]{1,20}(?=\s*[,!.])")


def is_foreign_phatic(sentence: str, skip: AbstractSet[str]) -> bool:
    """True when ``sentence`` is chit-chat in one of the languages above (see the module
    docstring); ``skip``: words that are no content whatever the language."""
    words = _WORD.findall(sentence.lower())
    if not words or words[0] not in FOREIGN_WORDS:  # English, or says something at once
        return False
    low = _VOCATIVE.sub(" ", sentence).lower()
    rest = _PHRASES.sub(" ", low)
    for word in _WORD.findall(rest):
        if word[0].isdigit() or not (word in _PHATIC or word in _FUNCTION or word in skip
                                     or len(word) < 3):
            return False
    return rest != low or any(word in _CUES for word in words)


# What someone eats or must not: an allergy, a diet, "can't eat …" in each language
# (none an English word: English is ``salience._DIET``'s).
FOREIGN_DIET = re.compile(
    r"\b(?:al[ée]rgic[oa]s?|allergique|allergisch|allergic[oa]|allergie|allergia|vegetarian[oa]s?"
    r"|végétarien(?:ne)?s?|vegetarisch|vegetariër|vegan[oa]s?|végétalien(?:ne)?s?"
    r"|veganer(?:in)?|veganist|cel[íi]ac[oa]s?|c(?:œ|oe)liaque|zöliakie|celiach[oa]"
    r"|intolerantes?|intolérante?s?|intollerante|unverträglichkeit|diabétique|diabétic[oa]"
    r"|diabetic[oa]|diabetiker(?:in)?|sin gluten|sans gluten|glutenfrei|senza glutine"
    r"|sem glúten|glutenvrij|halal|kosher|casher)\b"
    r"|\bno (?:puede|puedo|pueden|podemos|come|como|comen|comemos) (?:comer )?(?:carne|pescado"
    r"|marisco|gluten|lácteos|lacteos|cerdo|huevos?|frutos secos|nueces|cacahuetes?|maní)\b"
    r"|\bne (?:peu[tx]|peuvent|pouvons|mange|mangent|mangeons) pas(?: manger)?\b"
    r"|\b(?:isst|esse|essen|darf|darfst|dürfen|kann|können) (?:kein(?:e|en)?|nichts? mit)\b"
    r"|\bnon (?:può|posso|possono|possiamo|mangia|mangio|mangiano) (?:mangiare )?"
    r"|\bnão (?:pode|posso|podem|podemos|come|como|comem) (?:comer )?"
    r"|\b(?:eet|eten|mag|mogen|kan|kunnen) geen\b",
    re.IGNORECASE,
)
# What someone cannot do or must avoid: a fear, a condition, a wheelchair, a pregnancy.
FOREIGN_LIMITATION = re.compile(
    r"\b(?:miedo (?:a|de) (?:las alturas|volar|el agua)|vértigo|peur (?:du vide|de l'avion"
    r"|des hauteurs|de l'eau)|höhenangst|flugangst|paura (?:dell'altezza|di volare"
    r"|dell'acqua)|medo de (?:altura|voar|água)|hoogtevrees|vliegangst"
    r"|silla de ruedas|fauteuil roulant|rollstuhl|sedia a rotelle|cadeira de rodas|rolstoel"
    r"|embarazada|enceinte|schwanger|incinta|grávida|zwanger"
    r"|no (?:sabe|sé|saben) nadar|ne sai[ts] pas nager|kann nicht schwimmen"
    r"|non sa(?:nno)? nuotare|não sabe(?:m)? nadar|kan niet zwemmen"
    r"|(?:asma|asthme|epilepsia|épilepsie|epilepsie|epilessia))\b",
    re.IGNORECASE,
)
# A rule for how the assistant answers from now on: short answers, always or never doing
# a thing, from now on, what to call the user.
FOREIGN_STANDING_RULE = re.compile(
    r"\b(?:respuestas? (?:cortas?|breves?)|r[ée]ponses? (?:courtes?|br[èe]ves?)"
    r"|(?:kurze|knappe) antworten|antworte(?:t|n sie)? (?:bitte )?(?:kurz|knapp)"
    r"|risposte (?:brevi|corte)|respostas? (?:curtas?|breves?)|korte antwoorden"
    r"|antwoord (?:kort|beknopt)"
    # (Where a rule opens, as in English: "Mi madre siempre usa el metro" is a habit.)
    r"|(?:^|(?<=[,;:] ))(?:(?:por favor|s'il te plaît|s'il vous plaît|bitte|per favore"
    r"|alsjeblieft|graag),? )?(?:siempre|nunca|jamás|jamas|toujours|jamais|immer|nie"
    r"|niemals|sempre|mai|altijd|nooit) (?:me )?(?:uses|usa|utilices|recomiendes|sugieras"
    r"|menciones|respondas"
    r"|utilise|recommande|propose|réponds|mentionne|verwende|benutze|empfiehl|schlag"
    r"|antworte|erwähne|usare|usa|consigliare|suggerire|rispondere|usar|use|recomende"
    r"|sugira|responda|gebruik|raad|antwoord)"
    r"|de ahora en adelante|a partir de ahora|à partir de maintenant|d[ée]sormais"
    r"|ab jetzt|von nun an|ab sofort|d'ora in poi|da ora in poi|a partir de agora"
    r"|de agora em diante|vanaf nu|voortaan"
    r"|(?:llámame|llamame|appelle-moi|appelez-moi|nenn(?:e)? mich|chiamami|me chame"
    r"|noem me) (?-i:[A-ZÀ-ÖØ-Þ]))",
    re.IGNORECASE,
)
# Every branch of ``FOREIGN_STANDING_RULE`` holds one of these, in lower case and ASCII
# (or the sentence is not ASCII): the search of the literals costs a quarter of the
# rule's, and every user sentence is asked.
_RULE_LITERALS = re.compile(
    "respuest|reponse|antwort|rispost|resposta|antwoord|siempre|nunca|jamas|toujours"
    "|jamais|immer|nie|sempre|mai |altijd|nooit|adelante|partir de|desormais|jetzt"
    "|nun an|sofort|d'ora|da ora|agora|vanaf nu|voortaan|llamame|appel|nenn|chiamami"
    "|chame|noem")


def is_foreign_rule(sentence: str) -> bool:
    """True when ``sentence`` sets a rule for the answers to come in one of these
    languages (``FOREIGN_STANDING_RULE``)."""
    if sentence.isascii() and _RULE_LITERALS.search(sentence.lower()) is None:
        return False
    return FOREIGN_STANDING_RULE.search(sentence) is not None


# An AI assistant saying it has no access to, or no information about, a thing: by hand
# "Como assistente, não tenho acesso a informações sobre a localização da escola …" was
# a note of the embedded model's in a Portuguese chat.
FOREIGN_KNOWS_NOTHING = re.compile(
    r"^(?:(?:como|comme|als|come|as) (?:un |una |um |uma |een |ein |eine )?(?:asistente"
    r"|assistant|assistent|assistente|ia|ai|ki|modelo de lenguaje)(?: virtual)?,? )?"
    r"(?:lo siento,? |désolée?,? |es tut mir leid,? |mi dispiace,? |desculpe,? |sinto muito,? "
    r"|sorry,? )?(?:pero |mais |aber |ma |mas |maar )?"
    r"(?:no tengo (?:acceso|información|informacion|datos)"
    r"|je n'ai pas (?:accès|acces|d'information)|ich habe keinen zugriff"
    r"|ich habe keine (?:informationen|daten)|non ho (?:accesso|informazioni)"
    r"|não tenho (?:acesso|informações|informacoes)|nao tenho (?:acesso|informacoes)"
    r"|ik heb geen (?:toegang|informatie))",
    re.IGNORECASE,
)


# A correction that takes back a day, a month or an amount, as ``salience.value_swaps``
# reads one in English: "Cambio: el examen es ahora el viernes 18, no el jueves.", "die
# Prüfung ist jetzt am Freitag, nicht am Donnerstag", "l'esame ora è venerdì invece di
# giovedì", "de bruiloft is verplaatst van zaterdag naar zondag". By hand the summary of
# a Spanish chat kept the old day beside its correction, unmarked, as it did in English
# before ``value_swaps``. A bare "no", "pas" or "nicht" needs a word that says something
# changed ("no el jueves" alone may answer a question); "instead of" is a cue itself, and
# "from … to" needs a verb of moving.
_CALENDAR = alternation(OTHER_CALENDAR_WORDS)
_FOREIGN_VALUE = rf"\d+(?:[,.:]\d+)*(?:h\d{{0,2}})?|{_CALENDAR}"
# The articles and prepositions that may stand between the cue and the value.
_LEAD_IN = (r"(?:(?:el|la|los|las|lo|del|al|a|de|en|para|por|le|les|du|au|aux|à|pour|am"
            r"|an|den|dem|der|die|das|im|um|auf|für|zum|zur|il|gli|i|di|alle|ai|alla|per"
            r"|o|os|as|no|na|nos|nas|do|da|dos|em|às|ao|aos|het|op|om|van|voor|te)\s+){0,2}")
_FOREIGN_UNDONE = re.compile(
    r"(?<!\w)(?:en (?:lugar|vez) del?|au lieu d[eu]|plutôt que|(?:an)?statt|anstelle von"
    r"|invece d(?:i|el|ella|ello|ei|egli|elle)|anziché|al posto d(?:i|el|ella)"
    r"|em vez d[eoa]s?|ao invés d[eoa]s?|no lugar d[eoa]s?|in plaats van)\s+"
    rf"{_LEAD_IN}({_FOREIGN_VALUE})(?![\w%])"
    r"|(?<!\w)(?:ya no|no|pas|non più|non|nicht mehr|nicht|já não|não|niet meer|niet)\s+"
    rf"{_LEAD_IN}({_FOREIGN_VALUE})(?![\w%])"
    r"|(?<!\w)(?:del?|desde|von|vom|du|da|dal|dalla|dallo|do|van)\s+"
    rf"{_LEAD_IN}({_FOREIGN_VALUE})\s+(?:a|al|à|au|auf|zu|zum|nach|alla|allo|para|pro"
    r"|naar|tot|op)\s",
    re.IGNORECASE)
_FOREIGN_VALUE_WORD = re.compile(rf"(?<!\w)(?:{_FOREIGN_VALUE})(?![\w%])", re.IGNORECASE)
# The words one of ``_FOREIGN_UNDONE``'s branches needs (in lower case: ``_words``):
# every sentence is asked, and a set lookup costs a tenth of a search of the patterns.
_INSTEAD = frozenset(("lugar", "vez", "lieu", "plutôt", "statt", "anstatt", "anstelle",
                      "invece", "anziché", "posto", "invés", "plaats"))
_NEGATION = frozenset(("no", "pas", "non", "nicht", "não", "niet"))
_FROM = frozenset(("de", "del", "desde", "von", "vom", "du", "da", "dal", "dalla", "dallo",
                   "do", "van"))
# The words that say something changed ("ahora", "jetzt", "Cambio:", "ya no", "en
# realidad"), and the verbs of moving a thing to another day in their common forms
# ("verschoben", "déplacée", "spostata"), looked up in a sentence's words (``_words``)
# as ``_INSTEAD`` is.
_CHANGE_CUES = frozenset((
    "ahora", "ya", "cambio", "cambiado", "cambiada", "cambió", "finalmente",
    "corrección", "correccion", "realidad", "maintenant", "désormais", "finalement",
    "changement", "changé", "changée", "correction", "jetzt", "nun", "doch",
    "eigentlich", "änderung", "geändert", "korrektur", "stattdessen", "inzwischen",
    "ora", "adesso", "invece", "cambiato", "cambiata", "correzione", "realtà",
    "agora", "afinal", "mudança", "mudou", "mudamos", "correção", "correcao",
    "verdade", "nu", "toch", "eigenlijk", "wijziging", "gewijzigd", "veranderd",
    "correctie", "inmiddels"))
_MOVED = frozenset((
    "cambiado", "cambiada", "cambiados", "cambiadas", "movido", "movida", "movidos",
    "movidas", "trasladado", "trasladada", "aplazado", "aplazada", "adelantado",
    "adelantada", "cambió", "cambiaron", "movió", "movieron", "pasó", "pasaron",
    "aplazó", "aplazaron", "déplacé", "déplacée", "déplacés", "reporté", "reportée",
    "reportés", "décalé", "décalée", "décalés", "changé", "changée", "avancé",
    "avancée", "verschoben", "verlegt", "geändert", "vorverlegt", "spostato",
    "spostata", "spostati", "spostate", "rinviato", "rinviata", "anticipato",
    "anticipata", "cambiato", "cambiata", "posticipato", "posticipata", "mudou",
    "mudado", "mudada", "mudamos", "passou", "adiado", "adiada", "adiou",
    "antecipado", "antecipada", "transferido", "transferida", "verplaatst",
    "verschoven", "veranderd", "gewijzigd", "verzet"))


def _as_split(words: frozenset[str]) -> frozenset[str]:
    """``words`` as ``_words`` may give them: alone, or with the punctuation a
    sentence puts before or after a word ("¡Cambio", "Cambio:", "verschoben.")."""
    return frozenset(f"{before}{word}{after}" for word in words
                     for before in ("", "¡", "¿", "(", "«", '"', "“")
                     for after in ("", ".", ",", ":", ";", "!", "?", ")", "»", '"', "”"))


# (Taking the punctuation off the words themselves cost twice as much as the split.)
_INSTEAD, _NEGATION, _FROM, _CHANGE_CUES, _MOVED = map(
    _as_split, (_INSTEAD, _NEGATION, _FROM, _CHANGE_CUES, _MOVED))
_CHANGE_WORDS = _CHANGE_CUES | _MOVED
_TRIGGERS = _INSTEAD | _NEGATION | _FROM | _CHANGE_WORDS


# (A sentence is asked by ``foreign_value_swaps`` and ``foreign_updates`` in turn.)
@lru_cache(maxsize=1024)
def _words(sentence: str) -> frozenset[str]:
    """The words of ``sentence`` in lower case, as split at white space."""
    return frozenset(sentence.lower().split())



# The days and months German writes with a capital, as it writes every noun: no names
# (``salience.names_in``). "Mai" may be one, and the others' are written in lower case.
CAPITALISED_CALENDAR_WORDS = frozenset((
    "montag", "dienstag", "mittwoch", "donnerstag", "freitag", "samstag", "sonnabend",
    "sonntag", "januar", "jänner", "februar", "märz", "juni", "juli", "oktober", "dezember"))


def calendar_kind(word: str) -> str:
    """``day`` for a weekday of these languages, ``month`` for a month, else ""."""
    low = word.lower()
    return "day" if low in OTHER_WEEKDAYS else "month" if low in OTHER_CALENDAR_WORDS else ""


def foreign_values(text: str) -> list[str]:
    """The days, months and numbers ``text`` names as these languages write them, as
    written ("viernes", "18", "15h")."""
    return [match.group() for match in _FOREIGN_VALUE_WORD.finditer(text)]


def foreign_value_swaps(sentence: str) -> list[tuple[str, str]]:
    """What a correction in one of these languages takes back and puts in its place:
    (the value taken back, as written; the value said in its place, or ""), as
    ``salience.value_swaps`` gives them in English. The new value is the nearest of the
    same kind (a day, a month, a number) before the cue, or after "to"."""
    words = _words(sentence)
    if _TRIGGERS.isdisjoint(words):  # most sentences, English ones above all
        return []
    instead = not _INSTEAD.isdisjoint(words)
    changed = not _NEGATION.isdisjoint(words) and not _CHANGE_WORDS.isdisjoint(words)
    moved = not _FROM.isdisjoint(words) and not _MOVED.isdisjoint(words)
    if not (instead or changed or moved):
        return []
    found: list[tuple[str, str]] = []
    for match in _FOREIGN_UNDONE.finditer(sentence):
        written = match.group(1) or match.group(2) or match.group(3)
        if (match.group(2) and not changed) or (match.group(3) and not moved):
            continue
        kind = _kind(written)
        if match.group(3):
            after = _FOREIGN_VALUE_WORD.search(sentence, match.end())
            new = after.group() if after and _kind(after.group()) == kind else ""
        else:
            before = [value for value in foreign_values(sentence[:match.start()])
                      if _kind(value) == kind and value.lower() != written.lower()]
            new = before[-1] if before else ""
        found.append((written, new))
    return found


def _kind(written: str) -> str:
    return calendar_kind(written) or "number"


# What a sentence says a thing is, costs or when it happens, in these languages, as
# ``salience.stated_values`` reads English: "la cena es el jueves a las 20h", "das
# Budget ist 400 Euro", "le dîner avec Marta est jeudi". A newer one with a word of
# change ("Cambio: la cena ahora es el viernes.", "Das Budget ist jetzt 450 Euro.") says
# the older value no longer holds. The thing is the noun after the determiner, before
# up to two "of …"/"with …" ("el regalo de mi suegra") and the verb.
_DETERMINER = (r"(?:el|la|los|las|mi|mis|nuestra|nuestro|le|les|mon|ma|mes|notre|nos|der"
               r"|die|das|den|mein|meine|unser|unsere|il|lo|gli|i|mio|mia|nostro|nostra|o"
               r"|a|os|as|meu|minha|nosso|nossa|het|mijn|ons|onze)\s+|l['’]")
_OF_SOMETHING = (r"(?:\s+(?:de|del|con|para|avec|pour|du|des|mit|für|von|vom|di|della"
                 r"|per|com|do|da|dos|das|van|met|voor)"
                 r"(?:\s+(?:el|la|los|las|le|les|der|die|das|den|dem|il|lo|o|a|de|het|mi"
                 r"|mis|tu|su|mon|ma|mes|ton|sa|ses|notre|meine?[mnrs]?|deine?[mnrs]?"
                 r"|seine?[mnrs]?|ihre?[mnrs]?|unsere?[mnrs]?|mio|mia|miei|mie|tuo|tua|suo"
                 r"|sua|meu|minha|meus|minhas|seu|mijn|je|zijn|haar|onze))?"
                 r"\s+[^\W\d_]{2,}){0,2}")
_BEING = (r"(?:es|será|son|serán|cuesta|cuestan|empieza|sale|llega|est|sera|sont|coûte"
          r"|commence|part|arrive|ist|wird|sind|kostet|beginnt|kommt|findet|è|sarà|sono"
          r"|costa|inizia|parte|arriva|é|custa|começa|sai|chega|is|wordt|zijn|kost|begint"
          r"|vertrekt|komt)")
_NOW = (r"(?:\s+(?:ahora|ya|maintenant|désormais|finalement|jetzt|nun|doch|inzwischen|ora"
        r"|adesso|agora|afinal|nu|toch|inmiddels))?")
_FOREIGN_STATED = re.compile(
    rf"(?<!\w)(?:{_DETERMINER})([^\W\d_]{{3,}}){_OF_SOMETHING}{_NOW}\s+{_BEING}{_NOW}"
    rf"\s+{_LEAD_IN}(?:ca\.\s+|unos\s+|environ\s+|etwa\s+|circa\s+|cerca de\s+|ongeveer\s+)?"
    rf"([€$£]\s?)?({_FOREIGN_VALUE})(?![\w%])(?:\s*([^\W\d_]+))?",
    re.IGNORECASE)
# What ends the clause a thing's further values are read in ("… el jueves a las 20h,
# y el sábado …").
_FOREIGN_CLAUSE_END = re.compile(
    r";|:\s|,?\s(?:y|et|und|e|pero|mais|aber|ma|mas|maar|sino|mientras)\s", re.IGNORECASE)
_MORE_FOREIGN = re.compile(rf"(?<!\w)([€$£]\s?)?({_FOREIGN_VALUE})(?![\w%])(?:\s*([^\W\d_]+))?",
                           re.IGNORECASE)
# Before an hour: "a las 20h", "um 20 Uhr", "alle 20", "às 15h", "om 8 uur".
_AT_HOUR = re.compile(r"(?:a las|a la|à|um|alle|às|om|vers|gegen|verso|por volta das)\s*$",
                      re.IGNORECASE)
_HOUR_WORDS = frozenset(("h", "uhr", "uur", "horas", "heures", "heure", "ore"))


def foreign_statements(sentence: str) -> list[tuple[str, str, str | None, str, str | None]]:
    """What ``sentence`` says things are in one of these languages (see above): (the
    thing as written; its kind when the value tells it — ``day``, ``month``, ``date``
    (a day's number: "el viernes 18", "18. Juni"), ``time`` — else ""; the currency
    sign or None; the value as written; the word after it or None), the thing's first
    value, then the others in the rest of its clause."""
    found: list[tuple[str, str, str | None, str, str | None]] = []
    matches = list(_FOREIGN_STATED.finditer(sentence))
    for at, match in enumerate(matches):
        thing, sign, written, after = match.groups()
        end = matches[at + 1].start() if at + 1 < len(matches) else len(sentence)
        clause = _FOREIGN_CLAUSE_END.search(sentence, match.end(), end)
        stop = clause.start() if clause else end
        values = [(match.start(3), sign, written, after)]
        values += [(more.start(2), more[1], more[2], more[3])
                   for more in _MORE_FOREIGN.finditer(sentence, match.end(), stop)]
        previous = ""
        for start, sign, written, after in values:
            kind = calendar_kind(written)
            if not kind and written[:1].isdigit():
                if ":" in written or "h" in written.lower() or (
                        after or "").lower() in _HOUR_WORDS or _AT_HOUR.search(
                            sentence, max(0, start - 20), start):
                    kind = "time"
                elif calendar_kind(previous) == "day" or calendar_kind(
                        (after or "").lower()) == "month" or _MONTH_AFTER.match(
                            sentence, start + len(written)):
                    kind = "date"
            found.append((thing, kind, sign, written, after))
            previous = written
    return found


# A day's number before its month: "13 de junio", "18. Juni", "12 juin".
_MONTH_AFTER = re.compile(rf"\.?\s+(?:de\s+|di\s+)?(?:{_CALENDAR})(?!\w)", re.IGNORECASE)
_WEEKDAY_BEFORE = re.compile(
    rf"(?<!\w)(?:{alternation(OTHER_WEEKDAYS)})"
    r",?\s+$", re.IGNORECASE)


def is_day_number(text: str, start: int, end: int) -> bool:
    """Whether the number at ``text[start:end]`` is a day's in one of these languages:
    before a month ("13 de junio") or after a weekday ("el viernes 18"). Written anew
    beside a changed day, it would name a date nobody said."""
    return bool(_MONTH_AFTER.match(text, end)
                or _WEEKDAY_BEFORE.search(text, max(0, start - 24), start))


def foreign_updates(sentence: str) -> list[str]:
    """The things ``sentence`` says are something else now in one of these languages: a
    word of change (``_CHANGE_WORDS``) beside what it says they are
    (``foreign_statements``), as written. An older statement of another value of the
    same kind no longer holds (``salience.updated_things``)."""
    if _CHANGE_WORDS.isdisjoint(_words(sentence)):
        return []
    return list(dict.fromkeys(thing for thing, *_ in foreign_statements(sentence)))

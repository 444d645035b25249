"""Function words of the languages mnemo reads besides English and Chinese.

Spanish, French, German, Italian, Portuguese and Dutch: the six European languages most
often written to an assistant after English. Their articles, prepositions, pronouns and
commonest verbs carry no claim of their own, as "the", "of" and "is" carry none in
English. With none known, a memory entry in Spanish was refused for a word it merely
used ("the entry says things nobody in this conversation said ('tu')", seen by hand),
and two sentences about the same thing in French differed by "une" and "des".

``FUNCTION_WORDS`` leaves out every word that is English too (``ENGLISH_HOMOGRAPHS``:
"die", "war", "son", "fur", "van", "soy", "hay", "todo"), or a name in English
(``LOWER_CASE_FUNCTION_WORDS``: "del", "una", "Mia", "Ella", lake Como), or a content
word in another of the languages ("pelo": hair in Spanish), so a check that treats them
as no content reads English as before. A check that sees the case of a word may add
the second list for words written in lower case (``memory/grounding.py``); a reader
that knows its sentence is in one of these languages adds both
(``context/summary/other_languages.py``).
"""

from __future__ import annotations

__all__ = ["ENGLISH_HOMOGRAPHS", "FUNCTION_WORDS", "LOWER_CASE_FUNCTION_WORDS"]

FUNCTION_WORDS = frozenset("""
aan aber ahí alla anche ancora aqui aquí au auch auf aussi aux avec avez avons bij bist
c ca ce cela ces cet cette che ci contigo cosi così cómo d da daar dann das dass dat
davvero de dei dein deine deinen della delle dem der des di dich dir dit doch du e een
ein eine einem einen einer el ela ele elle elles em en er eres es eso essa esse esta
este esto estou estoy está et eu euch foi fue für gli hai het hier hij ho ich ihr ihre
ihren ik il ils im isso ist isto j ja je jij jou jouw jullie já l la las le les lo los
lui m maar mais mas mein meine mes meu mi mich mij mijn minha mio mir mis mit moi molto
mucha muchas mucho muchos muita muitas muito muitos muy más n na naar nao ne nel nicht
niet noch nog noi nos nosotros notre nous não nós o oder ohne ook op os otra otro
ou para pas pela pero por pra qu que quello questa questo qui qué s sa sans schon se
sehr sei sem ser ses seu si sie sind sommes sono sont sou su sua suis suo sí t ta
tambem tambien también também tanti tanto te tes ti toda todos toi tous toute tra tres
très tu tua tudo tuo tus tutti tutto tão tú u um uma un unas und une unos uns usted
ustedes uw vez voce você vocês voi vom von voor vos votre vous wie wij wir y ya yo ze
zij zijn zo zonder zu zum zur à ça è é él était êtes
""".split())  # noqa: SIM905 - a word list reads better as text
ENGLISH_HOMOGRAPHS = frozenset("""
a ai am an as ben bent bin chi com den die do dos era est fra fur ha has hay he i in is
ma mal me met no non of on pelo per plus pour sin so son soy tan todo ton tout van vi
war was we
""".split())  # noqa: SIM905
# Function words that are also a name in English ("Al", "Del", "Mia", "Ella", lake Como)
# or a rare English word ("con"): function words where written in lower case.
LOWER_CASE_FUNCTION_WORDS = frozenset("""
al con como del ella lei mia mon nas nella sus una uno
""".split())  # noqa: SIM905

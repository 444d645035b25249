"""Injection phrasings in languages other than English, by threat pattern id.

An attack does not have to be written in English to work: models follow "Ignora todas
las instrucciones anteriores" or "忽略之前的所有指令" as readily. The phrasings below
cover the attack shapes of ``patterns.py`` (ignore previous instructions, forget your
rules, from now on you are…, don't tell the user, reveal your system prompt, send the
history to a URL) in Spanish, French, German, Portuguese, Italian, Dutch, Swedish,
Polish, Turkish, Vietnamese, Russian, Ukrainian, Chinese (both scripts), Japanese,
Korean, Arabic, Hindi and Hebrew.

They are written in their own script with their accents; ``matchers.compile_pattern``
maps them through the same skeleton as the text (accents dropped, look-alike letters
folded), so "Esqueça" in a pattern matches "esqueca", "ESQUEÇA" or a Latin-o spelling.
Scripts without spaces between words use short character windows instead of ``\\b``.
"""

from __future__ import annotations

from mnemo.security.matchers import Matcher, regex, window

__all__ = ["matchers"]

_G = r"\W{1,6}"  # between words
_F = r"(?:\w{1,15}\W{1,6}){0,3}?"  # up to three filler words

_INJECTION = (
    # es
    rf"\b(?:ignora|ignorar|olvida|olvide|olvidar|omite|descarta|haz{_G}caso{_G}omiso{_G}de)"
    rf"{_G}(?:(?:todas|todos|tus|sus|cualquier){_G}){_F}(?:instrucciones|indicaciones|reglas"
    rf"|órdenes|directrices|normas)\b",
    rf"\b(?:ignora|ignorar|olvida|omite|descarta){_G}{_F}(?:instrucciones|indicaciones|reglas"
    rf"|órdenes|directrices){_G}(?:anteriores|previas|de{_G}arriba|del{_G}sistema)\b",
    # fr
    rf"\b(?:ignore[rz]?|oublie[rz]?|ne{_G}tiens{_G}pas{_G}compte{_G}des?){_G}(?:(?:toutes"
    rf"|tous|tes|vos|ses){_G}){_F}(?:instructions|consignes|règles|directives|ordres)\b",
    rf"\b(?:ignore[rz]?|oublie[rz]?){_G}{_F}(?:instructions|consignes|règles|directives)"
    rf"{_G}(?:précédentes|antérieures|ci-dessus|du{_G}système)\b",
    # de
    rf"\b(?:ignorier(?:e|en|t)?|vergiss|vergessen{_G}sie|missachte|missachten{_G}sie){_G}"
    rf"{_F}(?:anweisungen|instruktionen|regeln|vorgaben|befehle|richtlinien)\b",
    # pt
    rf"\b(?:ignore|ignora|ignorar|esqueça|esquece|esquecer|desconsidere|desconsidera){_G}"
    rf"(?:(?:todas|suas|tuas|quaisquer){_G}){_F}(?:instruções|regras|diretrizes|ordens"
    rf"|orientações)\b",
    rf"\b(?:ignore|ignora|esqueça|desconsidere){_G}{_F}(?:instruções|regras|diretrizes)"
    rf"{_G}anteriores\b",
    # it
    rf"\b(?:ignora|ignorare|dimentica|dimenticare|trascura){_G}(?:(?:tutte|tue|sue"
    rf"|qualsiasi){_G}){_F}(?:istruzioni|regole|direttive|indicazioni)\b",
    rf"\b(?:ignora|dimentica){_G}{_F}(?:istruzioni|regole|direttive){_G}precedenti\b",
    # nl, sv, pl
    rf"\b(?:negeer|vergeet){_G}{_F}(?:instructies|regels|richtlijnen|opdrachten)\b",
    rf"\b(?:ignorera|glöm){_G}{_F}(?:instruktioner|regler|riktlinjer)\b",
    rf"\b(?:zignoruj|ignoruj|zapomnij){_G}{_F}(?:instrukcje|polecenia|zasady|reguły"
    rf"|wytyczne)\b",
    # tr, vi
    rf"\btalimat\w{{0,6}}{_G}(?:\w{{1,10}}{_G})?(?:yok{_G}say|görmezden{_G}gel|unut)",
    rf"\bbỏ{_G}qua{_G}{_F}(?:\w{{1,10}}{_G})?(?:hướng{_G}dẫn|chỉ{_G}dẫn|quy{_G}tắc|lệnh)\b",
    # ru, uk
    rf"(?:игнорируй|проигнорируй|игнорируйте|проигнорируйте|забудь|забудьте|не{_G}обращай"
    rf"{_G}внимания{_G}на|ігноруй|проігноруй){_G}{_F}(?:инструкци|указани|правил|команд"
    rf"|інструкці|вказівк)",
    # zh, ja, ko
    r"(?:忽略|无视|忽视|無視|不要理会|不要理會|忘记|忘掉|忘記|跳过|跳過)[^\n。.!！]{0,12}"
    r"(?:指令|指示|提示词|提示詞|提示|规则|規則|说明|說明|设定|設定|命令|限制)",
    r"(?:指示|命令|ルール|規則|指令|プロンプト|制約|設定)[^\n。]{0,15}(?:無視|忘れ)",
    r"(?:無視|忘れ)[^\n。]{0,6}(?:指示|命令|ルール|規則)",
    r"(?:지시|명령|규칙|지침|프롬프트)[^\n.]{0,30}(?:무시|잊어)",
    # ar, hi, he
    r"(?:تجاهل|تجاهلي|انس|اترك)[^\n.]{0,30}(?:التعليمات|تعليمات|الأوامر|القواعد|التوجيهات)",
    r"(?:निर्देश|नियम|आदेश)[^\n।]{0,30}(?:अनदेखा|नज़रअंदाज़|भूल)",
    r"(?:התעלם|התעלמי|שכח)[^\n.]{0,30}(?:הוראות|ההוראות|הכללים|כללים|ההנחיות)",
)

_ROLE = (
    rf"\ba{_G}partir{_G}de{_G}ahora{_G}(?:eres|serás|actuarás)\b",
    rf"\b(?:désormais|à{_G}partir{_G}de{_G}maintenant|dorénavant){_G}tu{_G}(?:es|seras|agis)\b",
    rf"\b(?:ab{_G}jetzt|von{_G}nun{_G}an|ab{_G}sofort){_G}bist{_G}du\b",
    rf"\ba{_G}partir{_G}de{_G}agora{_G}(?:você|tu){_G}(?:é|será|és)\b",
    rf"\bda{_G}(?:ora|adesso){_G}in{_G}poi{_G}(?:sei|sarai)\b",
    rf"(?:теперь|отныне|с{_G}этого{_G}момента){_G}ты{_G}{_F}(?:ии|бот|ассистент|dan)\b",
    r"(?:从现在开始|從現在開始|从今以后|從今以後|现在起|現在起)[^\n]{0,6}你(?:是|就是|将是|將是|扮演)",
    r"(?:これから|今から|以後)[^\n。]{0,8}(?:あなたは|お前は)",
    r"(?:지금부터|이제부터|앞으로)[^\n.]{0,10}(?:너는|당신은)",
)

_BYPASS = (
    rf"\b(?:asistente|ia|modelo){_G}sin{_G}(?:ninguna{_G})?(?:restricciones|límites|reglas"
    rf"|filtros)\b",
    rf"\b(?:assistant|ia|modèle){_G}sans{_G}(?:aucune?{_G})?(?:restrictions?|limites?"
    rf"|règles|filtres?)\b",
    rf"\b(?:assistent|ki|modell){_G}ohne{_G}(?:jegliche{_G})?(?:einschränkungen|grenzen"
    rf"|regeln|filter)\b",
    rf"\b(?:assistente|ia|modelo){_G}sem{_G}(?:nenhuma{_G})?(?:restrições|limites|regras"
    rf"|filtros)\b",
    rf"\b(?:assistente|ia|modello){_G}senza{_G}(?:alcun\w?{_G})?(?:limiti|restrizioni|regole"
    rf"|filtri)\b",
    rf"без{_G}(?:каких-либо{_G}|всяких{_G}|любых{_G})?(?:ограничений|правил|фильтров|цензуры)",
    r"(?:没有|沒有|无|無|不受)(?:任何)?(?:限制|约束|約束|规则|規則|审查|審查)",
    r"制限(?:の|が)?(?:ない|無い|なし)",
    r"제한[^\n.]{0,6}없",
)

_DECEPTION = (
    rf"\bno{_G}(?:le{_G})?(?:digas|diga|cuentes|cuente|informes|menciones){_G}(?:nada{_G})?"
    rf"(?:al|a{_G}el)\W{{1,3}}usuario",
    rf"\bne{_G}(?:dis|dites|mentionne|révèle){_G}(?:rien|pas){_G}{_F}à{_G}l\W{{0,3}}utilisateur",
    rf"\b(?:sag|sage|sagen{_G}sie|erzähl|erzähle){_G}(?:dem|der){_G}(?:benutzer|nutzer"
    rf"|anwender|user)\w{{0,2}}{_G}nichts\b",
    rf"\bnão{_G}(?:conte|diga|fale|informe|mencione){_G}(?:nada{_G})?ao{_G}usuário",
    rf"\bnon{_G}(?:dire|dirlo|raccontare|menzionare){_G}(?:nulla{_G}|niente{_G})?all\W{{0,3}}utente",
    rf"не{_G}(?:говори|сообщай|рассказывай|упоминай){_G}(?:\w{{1,12}}{_G})?пользовател",
    r"(?:不要|别|別|不得)(?:告诉|告訴|透露给|透露給|让|讓)(?:用户|用戶|使用者)",
    r"ユーザー(?:に|には)[^\n。]{0,10}(?:言わない|伝えない|教えない|知らせない|秘密)",
    r"사용자(?:에게|한테)[^\n.]{0,10}(?:말하지|알리지)",
)

_LEAK = (
    rf"\b(?:muestra|revela|imprime|enseña|dime|muéstrame){_G}{_F}(?:prompt|mensaje"
    rf"|instrucciones){_G}(?:del|de){_G}sistema\b",
    rf"\b(?:révèle|affiche|montre|donne|imprime|écris){_G}(?:moi{_G})?(?:ton|votre|tes|vos)"
    rf"{_G}(?:prompt|instructions|consignes)\b",
    rf"\b(?:gib|zeig|zeige|verrate|nenne){_G}(?:mir{_G})?(?:deinen?|ihren?){_G}(?:system\W{{0,3}}"
    rf"prompt|systemprompt|anweisungen)\b",
    rf"\b(?:mostre|revele|imprima|exiba|diga){_G}(?:o{_G})?(?:seu|teu){_G}(?:prompt|instruções)\b",
    rf"\b(?:rivela|mostra|stampa|mostrami|dimmi){_G}(?:il{_G})?(?:tuo|suo){_G}(?:prompt"
    rf"|istruzioni)\b",
    rf"\b(?:toon|laat|geef){_G}(?:\w{{1,10}}{_G})?(?:je|jouw){_G}(?:systeemprompt|instructies"
    rf"|prompt)\b",
    rf"\b(?:visa|skriv{_G}ut){_G}(?:din|dina){_G}(?:systemprompt|instruktioner)\b",
    rf"\b(?:pokaż|ujawnij|wypisz){_G}(?:\w{{1,10}}{_G})?(?:prompt|instrukcje)\b",
    rf"\bsistem{_G}istem\w{{0,4}}{_G}(?:göster|yazdır|açıkla)",
    rf"\b(?:hiển{_G}thị|tiết{_G}lộ|in{_G}ra){_G}{_F}hệ{_G}thống\b",
    rf"(?:покажи|выведи|раскрой|напиши|выдай|виведи|покажи){_G}(?:\w{{1,12}}{_G})?(?:системн"
    rf"\w{{0,4}}{_G}(?:промпт|подсказк|инструкци)|промпт)",
    r"(?:输出|显示|告诉我|打印|泄露|透露|顯示|輸出|泄漏|展示)[^\n]{0,8}(?:系统提示|系統提示|系统指令"
    r"|系統指令|系统消息|system\W?prompt)",
    r"システム(?:プロンプト|指示|メッセージ)[^\n。]{0,10}(?:表示|出力|教え|見せ|公開|漏ら)",
    r"시스템\W{0,3}프롬프트[^\n.]{0,20}(?:출력|보여|공개|알려)",
    r"(?:اكشف|اعرض|أظهر|اطبع)[^\n.]{0,20}(?:موجه|تعليمات|رسالة)\W{1,3}النظام",
    r"सिस्टम\W{1,3}प्रॉम्प्ट[^\n।]{0,20}(?:दिखा|बता|प्रकट)",
    r"(?:הצג|חשוף|הדפס)[^\n.]{0,20}(?:הנחיית|הוראות)\W{1,3}המערכת",
)

_SEND = (r"(?:\b(?:envía|envie|enviar|manda|mande|sube|subir|reenvía|envoie|envoyez|envoyer"
         r"|transmets|transmettez|téléverse|sende|senden|schicke|schick|lade|übermittle|invia"
         r"|inviare|carica|stuur|verstuur|wyślij|gönder|gửi)\b|отправь|отправьте|перешли"
         r"|загрузи|вышли|отошли|надішли|发送|发到|上传|傳送|發送|上傳|送信|送って|アップロード"
         r"|전송|보내|업로드|أرسل|भेज)")
_HELD = (r"(?:\b(?:historial|conversación|historique|conversation|clés|chatverlauf|verlauf"
         r"|schlüssel|passwörter|histórico|conversa|chaves|cronologia|chiavi|geschiedenis"
         r"|historia|rozmowy|klucze|geçmiş|anahtar\w{0,5}|lịch{_G}sử)\b|историю|переписк|ключ"
         r"|пароли|токен|історію|ключі|对话|對話|聊天记录|聊天記錄|历史|歷史|密钥|密鑰|令牌|密码|密碼"
         r"|会話|履歴|キー|パスワード|トークン|대화|기록|비밀번호|토큰|المحادثة|سجل|المفاتيح|इतिहास"
         r"|बातचीत|कुंजी)").replace("{_G}", _G)
_WHERE = r"https?://|\b[\w.+-]{1,64}@[\w-]{1,63}\.[a-z]{2,}|\b\d{1,3}(?:\.\d{1,3}){3}\b|webhook"

_BY_ID: dict[str, tuple[Matcher, ...]] = {
    "prompt_injection": (regex(*_INJECTION),),
    "disregard_rules": (),
    "role_hijack": (regex(*_ROLE),),
    "bypass_restrictions": (regex(*_BYPASS),),
    "deception_hide": (regex(*_DECEPTION),),
    "sys_prompt_leak": (regex(*_LEAK),),
    "exfil_url": (window(_SEND, _HELD, _WHERE, span=200, either_order=True),),
}


def matchers(pattern_id: str) -> tuple[Matcher, ...]:
    """The other-language matchers of ``pattern_id`` (none for an id without any)."""
    return _BY_ID.get(pattern_id, ())

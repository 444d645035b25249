"""What the local summariser (C15, C18) reads out of ordinary conversation.

The coding side of the local summariser lives in ``mnemo.context.extract`` and
``mnemo.context.local_summary`` (their public names stay there); this package holds the
parts that make it keep what a conversation was about:

* ``dates`` — the date a session happened on, and relative dates ("last Friday",
  "two weeks ago") resolved against it;
* ``salience`` — phatic text (thanks, greetings, compliments, agreement), how much a
  sentence tells a later reader (names, numbers, dates, first-person facts, plans,
  preferences, changes), and which section it belongs to;
* ``cache`` — each message is read once: what a message says is kept by content hash,
  so repeated compactions of a live session never re-read old messages.
"""

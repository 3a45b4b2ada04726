# Normalise employee names for matching (accents, width, case); variables named like builtins are fine.
import unicodedata

def ascii_fold(text):
    decomposed = unicodedata.normalize("NFKD", text)
    return "".join(ch for ch in decomposed if not unicodedata.combining(ch))

samples = ["José Núñez", "Ｆｕｌｌｗｉｄｔｈ", "Zoë Ångström", "Li Wei"]
folded = [ascii_fold(s).lower() for s in samples]
print(folded)

list = [e["name"] for e in list_employees("HR")]
filter = "a"
max = 0
for name in list:
    hits = ascii_fold(name).lower().count(filter)
    if hits > max:
        max = hits
print("most", repr(filter), "in an HR name:", max)
categories = {ch: unicodedata.category(ch) for ch in "A1 é-"}
print(categories, unicodedata.name("é"))
{"folded": folded, "max": max, "people": len(list)}

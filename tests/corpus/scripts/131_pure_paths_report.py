# Build an export manifest with pathlib's pure paths: names, suffixes, relative locations.
from pathlib import PurePath, PurePosixPath

root = PurePosixPath("/exports/2026-04")
manifest = []
for store in list_stores()[:6]:
    region = store.get("region", "unknown").lower().replace(" ", "_")
    path = root / region / f"{store['store_id']}.revenue.csv"
    manifest.append({
        "path": str(path),
        "name": path.name,
        "stem": path.stem,
        "suffixes": path.suffixes,
        "relative": str(path.relative_to(root)),
        "depth": len(path.parts),
        "gz": str(path.with_suffix(".csv.gz")),
        "is_csv": path.match("*.csv"),
    })

regions = sorted({PurePath(m["relative"]).parts[0] for m in manifest})
print(repr(root), root.is_absolute(), [str(p) for p in PurePath(manifest[0]["path"]).parents][:3])
for m in manifest:
    print(f"{m['relative']:<40}{m['depth']:>3}")
{"manifest": manifest, "regions": regions, "parent": str(PurePosixPath(manifest[0]["path"]).parent)}

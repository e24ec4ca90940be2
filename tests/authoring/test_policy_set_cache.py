"""The language server's caches of a folder stay bounded (issue 33): in files, bytes and folders."""

from __future__ import annotations

from pathlib import Path

from policy_engine.authoring import policy_set
from policy_engine.authoring.policy_set import DiskCache, Listings, files_of, read_set, scan


def test_the_disk_cache_drops_the_least_recently_used_past_its_files_and_bytes() -> None:
    cache = DiskCache(max_files=3, max_bytes=10)
    for name in "abc":
        cache.put(Path(name), 1, 3, b"xyz")
    assert cache.get(Path("a"), 1, 3) == b"xyz"  # now the most recently used
    cache.put(Path("d"), 1, 3, b"xyz")  # four files: `b` goes
    assert cache.get(Path("b"), 1, 3) is None
    assert len(cache) == 3 and cache.size == 9
    cache.put(Path("e"), 1, 4, b"wxyz")  # 13 bytes: `c` goes
    assert cache.get(Path("c"), 1, 3) is None and cache.size <= 10
    cache.put(Path("big"), 1, 11, b"x" * 11)  # larger than the whole cache: not kept
    assert cache.get(Path("big"), 1, 11) is None and cache.size <= 10
    assert cache.get(Path("a"), 2, 3) is None  # another mtime is another file


def test_reading_a_set_rereads_a_file_only_when_it_changed(tmp_path: Path) -> None:
    (tmp_path / "a.policy").write_text("# one\n", encoding="utf-8")
    document = (tmp_path / "b.policy").resolve()
    listing = scan(tmp_path)
    cache = DiskCache()
    first = read_set(files_of(listing, document), {document: "# open\n"}, cache)
    assert first[str((tmp_path / "a.policy").resolve())] == b"# one\n"
    (tmp_path / "a.policy").write_text("# two, longer\n", encoding="utf-8")
    again = read_set(files_of(listing, document), {document: "# open\n"}, cache)
    assert again[str((tmp_path / "a.policy").resolve())] == b"# two, longer\n"


def test_listings_are_kept_per_folder_up_to_a_bound(tmp_path: Path) -> None:
    listings = Listings()
    roots = []
    for i in range(policy_set.MAX_LISTINGS + 2):
        root = tmp_path / f"set{i}"
        root.mkdir()
        (root / "p.policy").write_text("# p\n", encoding="utf-8")
        roots.append(root)
        listings.get(root)
    assert listings.scans == policy_set.MAX_LISTINGS + 2
    assert listings.get(roots[-1])[1] is False  # kept
    assert listings.get(roots[0])[1] is True  # dropped past the bound: walked again
    (roots[-1] / "sub").mkdir()
    assert listings.get(roots[-1])[1] is True  # its directory changed
    listings.invalidate(roots[-2] / "new.policy")
    assert listings.get(roots[-2])[1] is True


def test_a_link_loop_ends_and_the_walk_stops_past_the_file_cap(tmp_path: Path) -> None:
    (tmp_path / "loop").symlink_to(tmp_path, target_is_directory=True)
    for i in range(policy_set.MAX_FILES + 5):
        (tmp_path / f"p{i:04}.policy").write_text("", encoding="utf-8")
    listing = scan(tmp_path)
    assert len(listing.files) == policy_set.MAX_FILES + 1
    chosen = files_of(listing, (tmp_path / "zz.policy").resolve())
    assert chosen.truncated and len(chosen.files) == policy_set.MAX_FILES

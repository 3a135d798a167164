"""MkDocs hook: publish the figures under results/ with the site.

The results pages show the PNG files each benchmark writes into ``results/``; this hook
adds them to the site at the same relative path (``results/<table>/<file>.png``), so
that the figures live in one place, beside the tables they belong to.
"""

from pathlib import Path

from mkdocs.structure.files import File


def on_files(files, config):
    root = Path(config["config_file_path"]).parent
    for path in sorted((root / "results").rglob("*.png")):
        files.append(File(path.relative_to(root).as_posix(), src_dir=str(root),
                          dest_dir=config["site_dir"], use_directory_urls=config["use_directory_urls"]))
    return files

"""Execute the book's notebooks in place, so that their saved outputs are the ones nbval checks.

Usage: python scripts/execute_notebooks.py [NOTEBOOK ...]   (default: every book/*.ipynb)

Each notebook runs top to bottom on a fresh kernel from its own folder. What is saved is
only what a re-run reproduces byte for byte, so re-executing leaves book/ unchanged:
- metadata is what JupyterLab itself writes when it opens a notebook (see ``lean_metadata``),
  so opening a chapter in Lab and saving it changes nothing; no widget state is stored;
- the live-widget view of an explorer is dropped (its model id is random, and without a
  kernel it cannot show anything); the static panel beside it stays;
- consecutive printouts to the same stream are merged (how they are split depends on timing);
- cells tagged ``nbval-ignore-output`` (timings) keep no output: they differ on every run.
The time each notebook took is printed.
"""

import sys
import time
from pathlib import Path

import nbformat
from jupyter_client.kernelspec import KernelSpecManager
from nbclient import NotebookClient

ROOT = Path(__file__).resolve().parent.parent
KERNEL = "python3"
WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"
VARIABLE = "nbval-ignore-output"


def reproducible_outputs(cell) -> list:
    if VARIABLE in cell.metadata.get("tags", []):
        return []
    outputs = []
    for output in cell.outputs:
        output.get("data", {}).pop(WIDGET_VIEW, None)
        previous = outputs[-1] if outputs else None
        if (
            output.output_type == "stream"
            and previous is not None
            and previous.output_type == "stream"
            and previous.name == output.name
        ):
            previous.text += output.text
        else:
            outputs.append(output)
    return outputs


def kernelspec() -> dict:
    """The kernelspec JupyterLab writes into a notebook it opens on the ``python3`` kernel."""
    spec = KernelSpecManager().get_kernel_spec(KERNEL)
    return {"display_name": spec.display_name, "language": spec.language, "name": KERNEL}


def lean_metadata(nb) -> None:
    """Keep only the metadata JupyterLab writes itself, exactly as it writes it.

    Lab fills in ``kernelspec`` from the kernel's spec and ``language_info`` from the kernel's
    reply when it starts one; nbclient copies the same reply, so a saved notebook carries
    what Lab would store. One value depends on the machine: ``language_info.version``, the
    Python that ran the kernel (3.11.x). Lab rewrites it on a machine with another patch
    release, and so does this saver: both store the truth about the kernel, and nothing else
    in the file changes.
    """
    language_info = nb.metadata.get("language_info", {})
    nb.metadata = nbformat.from_dict({"kernelspec": kernelspec(), "language_info": language_info})
    for cell in nb.cells:
        # Tags (solution, nbval-ignore-output…) and myst-nb's options (image alt text) stay.
        kept = {key: cell.metadata[key] for key in ("tags", "mystnb") if cell.metadata.get(key)}
        cell.metadata = nbformat.from_dict(kept)
        cell.pop("id", None)


def refuse_stderr(path: Path, nb) -> None:
    """Stop before saving a notebook whose cells wrote to stderr (a warning, a font fallback):
    nbval would then fail on it with no word of why, and the site would show the warning."""
    written = [
        f"cell {index}: {output.text.rstrip()}"
        for index, cell in enumerate(nb.cells)
        for output in cell.get("outputs", [])
        if output.output_type == "stream" and output.name == "stderr"
    ]
    if written:
        raise SystemExit(f"{path.name} not saved; cells wrote to stderr:\n" + "\n".join(written))


def execute(path: Path, cwd: Path | None = None, client=NotebookClient) -> float:
    """Run the notebook at ``path`` in place, from ``cwd`` (default: its own folder), with
    ``client`` (an nbclient ``NotebookClient`` or a subclass)."""
    nb = nbformat.read(path, as_version=4)
    lean_metadata(nb)
    start = time.perf_counter()
    client(
        nb,
        timeout=900,  # only against a hang: on a busy machine a cell may take long
        kernel_name=KERNEL,
        resources={"metadata": {"path": str(cwd or path.parent)}},
        store_widget_state=False,
        # Every output has arrived when the last cell returns; a polite shutdown request
        # would add about a second per notebook (1.0 s against 0.1 s, with PyTorch loaded).
        shutdown_kernel="immediate",
    ).execute()
    seconds = time.perf_counter() - start
    lean_metadata(nb)  # execution adds metadata of its own
    for cell in nb.cells:
        if cell.cell_type == "code":
            cell.outputs = reproducible_outputs(cell)
    refuse_stderr(path, nb)
    # JupyterLab saves a 4.4 notebook as 4.4; 4.5 would add a random id to every cell.
    nb.nbformat, nb.nbformat_minor = 4, 4
    nbformat.write(nb, path)
    return seconds


def main(argv: list[str]) -> None:
    paths = [Path(p) for p in argv] or sorted((ROOT / "book").glob("*.ipynb"))
    for path in paths:
        print(f"{execute(path):6.1f} s  {path.relative_to(ROOT) if path.is_absolute() else path}")


if __name__ == "__main__":
    main(sys.argv[1:])

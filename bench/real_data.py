"""The shared real data sets the benchmarks read (see ../shared/data/README.md)."""

import os
import tarfile
from pathlib import Path

import numpy as np

# Columns of the UCI Adult files (adult/adult.data, adult/adult.test), by
# position: age, fnlwgt, education-num, capital-gain, capital-loss,
# hours-per-week; the rest are categories. The label is the last field.
ADULT_NUMERIC = [0, 2, 4, 10, 11, 12]
ADULT_CATEGORICAL = [1, 3, 5, 6, 7, 8, 9, 13]


def read_adult(path, skiprows):
    """Adult's features and labels from one of its files (``skiprows`` 1 for
    adult.test, which opens with a comment).

    X is an object array of the 14 columns: floats in the numeric ones,
    strings in the others, None where the file has ``?`` (a value not
    recorded, only ever in categorical columns). Labels lose the test
    file's final ``.``.
    """
    rows = [
        line.split(", ")
        for line in path.read_text().splitlines()[skiprows:]
        if line.strip()
    ]
    X = np.array([row[:-1] for row in rows], dtype=object)
    X[X == "?"] = None
    X[:, ADULT_NUMERIC] = X[:, ADULT_NUMERIC].astype(np.float64)
    return X, np.array([row[-1].rstrip(".") for row in rows])


# 20 Newsgroups, "bydate" split: the archive of the shared data folder.
NEWSGROUPS_ARCHIVE = Path("20newsgroups") / "20news-bydate.tar.gz"


def shared_data_dir():
    """The shared data folder: $FASTNB_DATA_DIR, else ``shared/data`` beside
    the checkout (as the tests find it)."""
    if os.environ.get("FASTNB_DATA_DIR"):
        return Path(os.environ["FASTNB_DATA_DIR"])
    return Path(__file__).resolve().parents[2] / "shared" / "data"


def read_newsgroups(archive):
    """20 Newsgroups' posts from its "bydate" archive: ``(train, test)``,
    each ``(texts, labels)``: the posts and labels of scikit-learn's
    ``fetch_20newsgroups`` (each post decoded as latin-1, the label its
    group's place in the sorted groups), in the archive's sorted order
    rather than shuffled."""
    posts = {"train": {}, "test": {}}
    with tarfile.open(archive, "r:gz") as tar:
        for member in tar:
            parts = member.name.split("/")
            if not member.isfile() or len(parts) != 3:
                continue
            split = parts[0].removeprefix("20news-bydate-")
            file = tar.extractfile(member)
            posts[split][parts[1], parts[2]] = file.read().decode("latin-1")
    groups = sorted({group for group, _ in posts["train"]})
    return tuple(
        (
            [posts[split][key] for key in sorted(posts[split])],
            np.array([groups.index(group) for group, _ in sorted(posts[split])]),
        )
        for split in ("train", "test")
    )

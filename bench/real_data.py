"""The shared real data sets the benchmarks read (see ../shared/data/README.md)."""

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

"""sf.manifest of a team's bucket (moto's S3 on loopback): the file names the bucket by its address and holds no
credential, and the check of it against the bucket finds the same data."""

from __future__ import annotations

import pytest

import storeframes as sf
from tests._s3 import ACCESS_KEY, SECRET_KEY
from tests.lake.test_manifest import fill

pytestmark = pytest.mark.s3

pytest.importorskip("obstore")


def test_a_manifest_of_a_bucket_names_it_without_credentials_and_checks_against_it(s3_bucket, tmp_path):
    options = s3_bucket.storage_options
    fetched = fill(s3_bucket.url, storage_options=options)
    path = tmp_path / "analysis-manifest.json"

    made = sf.manifest("metadata", "metrics", cache_dir=s3_bucket.url, storage_options=options, path=path)

    text = path.read_text()
    assert made.cache == s3_bucket.url and f'"cache": "{s3_bucket.url}"' in text
    for secret in (ACCESS_KEY, SECRET_KEY, SECRET_KEY.replace("/", "%2F")):
        assert secret not in text and secret not in repr(made)
    assert [(t.name, t.rows) for t in made.tables] == [("metadata", 3), ("metrics", fetched["metrics"].height)]
    checked = sf.check_manifest(path, s3_bucket.url, storage_options=options)
    assert checked.ok and [i.status for i in checked.items] == ["same", "same"]
    assert SECRET_KEY not in repr(checked) and SECRET_KEY not in checked._repr_html_()

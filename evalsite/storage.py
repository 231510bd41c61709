"""Where uploaded evaluation files and export files live, chosen by the environment.

``FILE_STORAGE=local`` (the default, ``make run``) keeps them under MEDIA_ROOT on this machine.
That only works while the web server and every worker share that directory. With several
containers or hosts set ``FILE_STORAGE=s3``: an S3-compatible object store (AWS S3, MinIO)
that every process reaches over the network.
"""

from collections.abc import Mapping

from django.core.exceptions import ImproperlyConfigured

LOCAL = "local"
S3 = "s3"


def default_storage_from_env(environ: Mapping[str, str]) -> dict:
    """The ``STORAGES["default"]`` entry for this environment."""
    kind = environ.get("FILE_STORAGE", LOCAL).strip().lower() or LOCAL
    if kind == LOCAL:
        return {"BACKEND": "django.core.files.storage.FileSystemStorage"}
    if kind != S3:
        raise ImproperlyConfigured(f"FILE_STORAGE must be '{LOCAL}' or '{S3}', not {kind!r}.")
    bucket = environ.get("STORAGE_BUCKET", "")
    if not bucket:
        raise ImproperlyConfigured("FILE_STORAGE=s3 needs STORAGE_BUCKET.")
    return {
        "BACKEND": "storages.backends.s3.S3Storage",
        "OPTIONS": {
            "bucket_name": bucket,
            # Empty for AWS itself; the MinIO (or other) server's URL otherwise.
            "endpoint_url": environ.get("STORAGE_ENDPOINT_URL") or None,
            "access_key": environ.get("STORAGE_ACCESS_KEY") or None,
            "secret_key": environ.get("STORAGE_SECRET_KEY") or None,
            "region_name": environ.get("STORAGE_REGION") or None,
            # MinIO and most S3-compatible servers address buckets by path, not by host name.
            "addressing_style": "path",
            "location": environ.get("STORAGE_PREFIX", ""),
            # Two uploads with one name must never replace each other.
            "file_overwrite": False,
            # Files are private: the site streams them to logged-in users itself.
            "default_acl": None,
            "querystring_auth": True,
        },
    }

"""Where uploaded evaluation files and export files live, chosen by the environment.

``FILE_STORAGE=local`` (the default, ``make run``) keeps them under MEDIA_ROOT on this machine.
That only works while the web server and every worker share that directory. With several
containers or hosts set ``FILE_STORAGE=s3``: an S3-compatible object store (AWS S3, MinIO)
that every process reaches over the network.
"""

from django.core.exceptions import ImproperlyConfigured

from evalsite.env import env_choice, env_str

LOCAL = "local"
S3 = "s3"


def default_storage_from_env() -> dict:
    """The ``STORAGES["default"]`` entry for this environment."""
    if env_choice("FILE_STORAGE", LOCAL, (LOCAL, S3)) == LOCAL:
        return {"BACKEND": "django.core.files.storage.FileSystemStorage"}
    bucket = env_str("STORAGE_BUCKET")
    if not bucket:
        raise ImproperlyConfigured("FILE_STORAGE=s3 needs STORAGE_BUCKET.")
    return {
        "BACKEND": "storages.backends.s3.S3Storage",
        "OPTIONS": {
            "bucket_name": bucket,
            # Empty for AWS itself; the MinIO (or other) server's URL otherwise.
            "endpoint_url": env_str("STORAGE_ENDPOINT_URL") or None,
            "access_key": env_str("STORAGE_ACCESS_KEY") or None,
            "secret_key": env_str("STORAGE_SECRET_KEY") or None,
            "region_name": env_str("STORAGE_REGION") or None,
            # MinIO and most S3-compatible servers address buckets by path, not by host name.
            "addressing_style": "path",
            "location": env_str("STORAGE_PREFIX"),
            # Two uploads with one name must never replace each other.
            "file_overwrite": False,
            # Files are private: the site streams them to logged-in users itself.
            "default_acl": None,
            "querystring_auth": True,
        },
    }

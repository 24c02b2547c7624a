"""Google Cloud GPU prices as recorded Cloud Billing Catalog rows (no live fetcher: google-cloud-billing is not a
dependency), mapped to catalog GPUs."""

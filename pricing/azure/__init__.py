"""Azure GPU prices from the public Azure Retail Prices API (no authentication): fetcher, parser, SKU table."""

from rest_framework import serializers

from pricing.models import CloudOffer, PriceSnapshot


class PriceSnapshotSerializer(serializers.ModelSerializer):
    stale = serializers.BooleanField(source="is_stale")
    offers_url = serializers.HyperlinkedIdentityField(view_name="api:price-snapshot-offers")

    class Meta:
        model = PriceSnapshot
        fields = ["id", "kind", "source", "fetched_at", "created_at", "stale", "notes", "offers_url"]


class CloudOfferSerializer(serializers.ModelSerializer):
    usd_per_hour = serializers.DecimalField(max_digits=14, decimal_places=6)

    class Meta:
        model = CloudOffer
        fields = [
            "id",
            "provider",
            "instance_type",
            "region",
            "availability_zone_id",
            "purchase",
            "usd_per_hour",
            "gpus",
            "gpu_model",
            "capacity_constrained",
            "observed_at",
        ]

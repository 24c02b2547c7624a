# Written by hand for issue 14 (vendor quotes), in the form `makemigrations` gives.

import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("planner", "0005_worker_progress"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.CreateModel(
            name="VendorQuote",
            fields=[
                ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                ("vendor", models.CharField(help_text="Who quoted (vendor, reseller or cloud).", max_length=200)),
                ("reference", models.CharField(help_text="The quotation's number or document title.", max_length=255)),
                ("quoted_on", models.DateField(help_text="The date on the quotation.")),
                ("filename", models.CharField(blank=True, max_length=255)),
                ("uploaded_at", models.DateTimeField(auto_now_add=True)),
                ("active", models.BooleanField(default=True, help_text="Only active quotes price new runs.")),
                (
                    "owner",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="quotes",
                        to=settings.AUTH_USER_MODEL,
                    ),
                ),
            ],
            options={
                "ordering": ["-uploaded_at", "-pk"],
                "indexes": [models.Index(fields=["owner", "-uploaded_at"], name="planner_ven_owner_i_77d28e_idx")],
            },
        ),
        migrations.CreateModel(
            name="VendorQuoteLine",
            fields=[
                ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                ("row", models.PositiveIntegerField(help_text="Row of the uploaded file (header = row 1).")),
                ("part", models.CharField(help_text="BOM part number or catalog id.", max_length=128)),
                ("description", models.CharField(blank=True, max_length=255)),
                ("unit_price_usd", models.DecimalField(decimal_places=2, max_digits=14)),
                (
                    "quote",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="lines",
                        to="planner.vendorquote",
                    ),
                ),
            ],
            options={"ordering": ["quote", "row"]},
        ),
    ]

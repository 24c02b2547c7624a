"""The capex lines beyond the hardware read as a quotation line does: a percentage stored with six decimals in the
database (DecimalField, decimal_places=6) is written as a person writes it, "10 %", never "10.000000 %"."""

from __future__ import annotations

from decimal import Decimal

from engine.costing.capex_lines import HardwareBase, capex_items
from engine.result.costs_onprem import ParameterUsed

# As the pricing app hands them over: Decimal values with the database's six decimal places.
VALUES = {
    "install_integration_percent": Decimal("5.000000"),
    "freight_percent": Decimal("1.000000"),
    "spares_percent": Decimal("3.000000"),
    "sales_tax_percent": Decimal("7.250000"),
    "maintenance_percent_per_year": Decimal("10.000000"),
    "support_bundled_years": Decimal("3.000000"),
    "software_licence_years": Decimal("3.000000"),
    "software_usd_per_gpu_year": Decimal("4500.000000"),
}


def test_percentages_in_capex_line_descriptions_have_no_trailing_zeros():
    used = {name: ParameterUsed(v, v, "%", "assumption", "test", "2026-11-22") for name, v in VALUES.items()}
    base = HardwareBase(hardware_usd=Decimal("1000000"), systems_usd=Decimal("800000"), system="hgx-h100-oem", gpus=64)
    text = {item.part_number: item.description for item in capex_items(base, VALUES, used)}
    assert text["SVC-INSTALL"] == "Installation, integration, burn-in and acceptance: 5 % of the hardware"
    assert text["SVC-FREIGHT"] == "Freight, insurance in transit and rigging: 1 % of the hardware"
    assert text["SPARES-POOL"] == "On-site spares pool (field-replaceable units): 3 % of the GPU systems"
    assert text["TAX-SALES-USE"] == "Sales/use tax: 7.25 % of the goods (hardware and spares)"
    assert text["SUPPORT-3Y"] == "Hardware support contract, 3 years prepaid: 10 % of the hardware per year"
    assert all("000" not in description for description in text.values())

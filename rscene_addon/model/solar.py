"""Solar position (NOAA's approximation, about 0.01 degree): where the sun is for a weather record."""
from __future__ import annotations

import datetime
import math


def solar_position(year: int, month: int, day: int, hours: float, latitude: float, longitude: float,
                   utc_offset_hours: float = 0.0) -> tuple[float, float]:
    """(azimuth, elevation) in degrees; azimuth clockwise from north, ``hours`` local clock time."""
    day_of_year = datetime.date(year, month, day).timetuple().tm_yday
    utc_hours = hours - utc_offset_hours
    days_in_year = 366 if datetime.date(year, 12, 31).timetuple().tm_yday == 366 else 365
    g = 2.0 * math.pi / days_in_year * (day_of_year - 1 + (utc_hours - 12.0) / 24.0)
    eqtime = 229.18 * (0.000075 + 0.001868 * math.cos(g) - 0.032077 * math.sin(g)
                       - 0.014615 * math.cos(2 * g) - 0.040849 * math.sin(2 * g))
    decl = (0.006918 - 0.399912 * math.cos(g) + 0.070257 * math.sin(g) - 0.006758 * math.cos(2 * g)
            + 0.000907 * math.sin(2 * g) - 0.002697 * math.cos(3 * g) + 0.00148 * math.sin(3 * g))
    true_solar_minutes = utc_hours * 60.0 + eqtime + 4.0 * longitude
    hour_angle = math.radians(true_solar_minutes / 4.0 - 180.0)
    lat = math.radians(latitude)
    cos_zenith = math.sin(lat) * math.sin(decl) + math.cos(lat) * math.cos(decl) * math.cos(hour_angle)
    zenith = math.acos(max(-1.0, min(1.0, cos_zenith)))
    azimuth = math.degrees(math.atan2(math.sin(hour_angle),
                                      math.cos(hour_angle) * math.sin(lat) - math.tan(decl) * math.cos(lat)))
    return (azimuth + 180.0) % 360.0, 90.0 - math.degrees(zenith)

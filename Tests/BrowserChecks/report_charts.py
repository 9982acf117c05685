#!/usr/bin/env python3
"""Opens a cellpath report in Debian's headless chromium (driven by chromium-driver through
selenium), reads back the charts that Chart.js drew, and the console's messages, and saves a
screenshot. Chromium's profile goes beside the report. Prints one JSON object on stdout; any
failure to run is an exception (exit 1).

Usage: report_charts.py REPORT.html SCREENSHOT.png
"""
import json
import os
import sys

from selenium import webdriver
from selenium.webdriver.chrome.service import Service

READ_CHARTS = """
return Object.values(Chart.instances).map(chart => ({
  id: chart.canvas.id,
  type: chart.config.type,
  width: chart.width,
  height: chart.height,
  labels: (chart.data.labels || []).map(String),
  datasets: chart.data.datasets.map((dataset, index) => ({
    label: dataset.label,
    data: dataset.data,
    drawn: chart.getDatasetMeta(index).data.length
  }))
}));
"""


def main(report, screenshot):
    options = webdriver.ChromeOptions()
    options.binary_location = "/usr/bin/chromium"
    for argument in ["--headless=new", "--disable-gpu", "--disable-dev-shm-usage", "--window-size=1280,4000",
                     "--user-data-dir=" + os.path.join(os.path.dirname(os.path.abspath(report)), "chromium-profile")]:
        options.add_argument(argument)
    if os.geteuid() == 0:
        options.add_argument("--no-sandbox")  # chromium refuses to run as root with its sandbox
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(service=Service(executable_path="/usr/bin/chromedriver"), options=options)
    try:
        driver.get("file://" + os.path.abspath(report))
        charts = driver.execute_script(READ_CHARTS)
        title = driver.title
        # The whole page in one picture: the window as tall as the page.
        driver.set_window_size(1280, driver.execute_script("return document.body.scrollHeight") + 100)
        driver.save_screenshot(screenshot)
        console = [{"level": entry["level"], "message": entry["message"]} for entry in driver.get_log("browser")]
    finally:
        driver.quit()
    json.dump({"title": title, "charts": charts, "console": console}, sys.stdout)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])

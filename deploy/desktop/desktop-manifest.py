"""Prints what this desktop image has, as the JSON of its org.benchfleet.desktop label.

Run at build time inside the image (python3 desktop-manifest.py BYTEBOT_DESKTOP_IMAGE); the
build script copies the output into the label. Every version is read from the image itself
(dpkg, pip, the files), so the label cannot claim an app that is not there. Schema: README.md.
"""

import hashlib
import json
import os
import re
import shutil
import subprocess
import sys

SCHEMA = 1
OSWORLD_COMMIT = "f6cee715783b2b2c6f38d460a6dbab90495d238a"
BYTEBOT_COMMIT = "99347e260b495e0900ac16cc7f11ce2ec5ae9a6c"
LOCAL_RECIPE = "/usr/share/benchfleet/bytebot-desktop.json"
SERVER_DIR = "/home/user/server"
SUPERVISORD_CONF = "/etc/supervisor/conf.d/supervisord.conf"
ABSENT_VS_CODE = (
    "not installed: Debian packages no Visual Studio Code and this build reaches no Microsoft "
    "repository (see deploy/desktop/README.md)"
)

# OSWorld's apps: the Debian/Ubuntu packages that hold them and the command tasks launch.
APPS = {
    "chrome": (["google-chrome-stable", "chromium"], "google-chrome"),
    "firefox": (["firefox-esr", "firefox"], "firefox-esr"),
    "thunderbird": (["thunderbird"], "thunderbird"),
    "libreoffice_calc": (["libreoffice-calc"], "libreoffice"),
    "libreoffice_impress": (["libreoffice-impress"], "libreoffice"),
    "libreoffice_writer": (["libreoffice-writer"], "libreoffice"),
    "gimp": (["gimp"], "gimp"),
    "vlc": (["vlc"], "vlc"),
    "vs_code": (["code"], "code"),
    "nautilus": (["nautilus"], "nautilus"),
    "gnome_terminal": (["gnome-terminal"], "gnome-terminal"),
    "xfce4_terminal": (["xfce4-terminal"], "xfce4-terminal"),
}

# Commands OSWorld task configs and getters run on the desktop (found on PATH or not).
COMMANDS = [
    "bash", "code", "dconf", "expect", "gimp", "gio", "git", "gnome-terminal", "google-chrome",
    "gsettings", "jq", "killall", "libreoffice", "nautilus", "pip", "pkill", "pulseaudio", "python",
    "python3", "socat", "sudo", "tar", "thunderbird", "timedatectl", "unzip", "update-desktop-database",
    "vlc", "wmctrl", "xdg-open", "xdotool", "xclip", "xsel", "zip",
]


def dpkg_version(package):
    result = subprocess.run(
        ["dpkg-query", "-W", "-f=${Status}\t${Version}", package],
        capture_output=True, text=True, check=False,
    )
    status, _, version = result.stdout.partition("\t")
    return version if result.returncode == 0 and status.endswith(" installed") else None


def pip_version(name):
    result = subprocess.run(
        ["python3", "-m", "pip", "show", name], capture_output=True, text=True, check=False
    )
    match = re.search(r"^Version: (\S+)", result.stdout, re.M)
    return match.group(1) if match else None


def sha256(path):
    with open(path, "rb") as handle:
        return hashlib.sha256(handle.read()).hexdigest()


def os_name():
    with open("/etc/os-release", encoding="utf-8") as handle:
        fields = dict(line.rstrip("\n").split("=", 1) for line in handle if "=" in line)
    return fields.get("PRETTY_NAME", "").strip('"')


def screen_size():
    with open(SUPERVISORD_CONF, encoding="utf-8") as handle:
        match = re.search(r"Xvfb :0 -screen 0 (\d+x\d+)x\d+", handle.read())
    return match.group(1) if match else None


def chrome_is_chromium():
    path = shutil.which("google-chrome")
    if path is None:
        return False
    with open(os.path.realpath(path), "rb") as handle:
        return b"/usr/bin/chromium" in handle.read(4096)


def apps():
    found = {}
    for app, (packages, command) in APPS.items():
        package, version = next(
            ((name, dpkg_version(name)) for name in packages if dpkg_version(name)), (None, None)
        )
        entry = {"version": version, "package": package, "command": command}
        if version is None:
            entry["why"] = ABSENT_VS_CODE if app == "vs_code" else "not installed"
        found[app] = entry
    found["python"] = {"version": sys.version.split()[0], "package": "python3", "command": "python"}
    found["pyautogui"] = {"version": pip_version("pyautogui"), "package": "pyautogui", "command": None}
    return found


def substitutions(local_recipe):
    listed = [
        {
            "for": "GNOME on Ubuntu 22.04 (OSWorld's VM)",
            "by": "XFCE 4 on Xvfb (Bytebot's desktop), with a session bus at /run/user/1000/bus",
            "why": "the desktop is Bytebot's; GNOME Shell settings (org.gnome.shell) have no effect",
        }
    ]
    if chrome_is_chromium():
        listed.append(
            {
                "for": "google-chrome (Google Chrome)",
                "by": f"chromium {dpkg_version('chromium')} (Debian) as google-chrome, profile ~/.config/google-chrome",
                "why": "Google's repository is not reachable; Chromium speaks the same DevTools protocol",
            }
        )
    if local_recipe:
        listed += [item for item in local_recipe["adaptations"] if item["by"] is not None]
    return listed


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: desktop-manifest.py BYTEBOT_DESKTOP_IMAGE")
    local_recipe = None
    if os.path.exists(LOCAL_RECIPE):
        with open(LOCAL_RECIPE, encoding="utf-8") as handle:
            local_recipe = json.load(handle)
    manifest = {
        "schema": SCHEMA,
        "base": {
            "image": sys.argv[1],
            "route": "local" if local_recipe else "registry",
            "os": os_name(),
        },
        "bytebot": {
            "commit": BYTEBOT_COMMIT if local_recipe else None,
            "recipe": local_recipe["recipe"] if local_recipe else None,
            "absent": [item for item in (local_recipe or {"adaptations": []})["adaptations"] if item["by"] is None],
        },
        "osworld": {
            "commit": OSWORLD_COMMIT,
            "server": {name: sha256(f"{SERVER_DIR}/{name}") for name in ("main.py", "pyxcursor.py")},
        },
        "screen": screen_size(),
        "apps": apps(),
        "commands": {name: shutil.which(name) for name in COMMANDS},
        "substitutions": substitutions(local_recipe),
    }
    json.dump(manifest, sys.stdout, sort_keys=True, separators=(",", ":"))
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()

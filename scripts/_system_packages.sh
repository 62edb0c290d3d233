# Sourced by scripts/test: system packages the tests use, installed when missing and when we can (root + apt).
#   bubblewrap: the shell sandbox (its tests are skipped, with the reason, where it cannot be installed)
#   chromium: the browser the web UI tests drive through Playwright (never a downloaded browser)
#   git: checkpoints snapshot a folder with it before and after a shell command (cowork.sessions._shadow)
#   libreoffice (headless Calc and Impress): recalculating a spreadsheet's formulas and drawing slides for previews
#   python3.11-doc: the Python documentation's HTML, the real corpus bench/retrieval.py measures retrieval on
#   xvfb, openbox (an EWMH window manager), xdotool: the X11 capture source is tested against a real X server, window
#     manager and real windows (cowork.testing.xdisplay)
#   dbus-daemon, dunst: desktop notifications are tested against a private session bus and a real notification
#     daemon on Xvfb (cowork.testing.dbus); Debian 12 packages dbus-daemon on its own, apart from dbus
need=()
command -v git >/dev/null 2>&1 || need+=(git)
command -v bwrap >/dev/null 2>&1 || need+=(bubblewrap)
[ -x /usr/bin/chromium ] || need+=(chromium)
[ -d /usr/share/doc/python3.11/html ] || need+=(python3.11-doc)
command -v Xvfb >/dev/null 2>&1 || need+=(xvfb)
command -v xdotool >/dev/null 2>&1 || need+=(xdotool)
command -v openbox >/dev/null 2>&1 || need+=(openbox)
command -v dbus-daemon >/dev/null 2>&1 || need+=(dbus-daemon)
command -v dunst >/dev/null 2>&1 || need+=(dunst)
if [ ${#need[@]} -gt 0 ]; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    echo "== installing ${need[*]} (apt)"
    DEBIAN_FRONTEND=noninteractive apt-get install -y -q "${need[@]}" >/dev/null 2>&1 \
      || { apt-get update -q >/dev/null 2>&1 && DEBIAN_FRONTEND=noninteractive apt-get install -y -q "${need[@]}" >/dev/null 2>&1; } \
      || echo "warning: could not install ${need[*]}; the tests that need them are skipped" >&2
  else
    echo "warning: ${need[*]} missing and not installable here; the tests that need them are skipped" >&2
  fi
fi
# LibreOffice without its recommendations (no Java, no desktop integration): about 60 packages, 15 s here.
if ! command -v soffice >/dev/null 2>&1 && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
  echo "== installing libreoffice (headless Calc and Impress; apt)"
  office=(libreoffice-calc-nogui libreoffice-impress-nogui)
  DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${office[@]}" >/dev/null 2>&1 \
    || { apt-get update -q >/dev/null 2>&1 \
      && DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${office[@]}" >/dev/null 2>&1; } \
    || echo "warning: could not install LibreOffice; the tests that need it are skipped" >&2
fi

#!/bin/sh
# Installs the system tools the test suites use, on Debian or Ubuntu: redis-server (the Redis
# suites start their own), poppler-utils (reports are read back with pdftotext, pdfinfo,
# pdftoppm), LibreOffice Calc (the XLSX export is converted back by soffice), curl (the
# walkthrough of docs/walkthrough.md runs as written) and Chromium (the /docs page is opened in it). Bun, Deno and
# workerd come from node_modules. Run as root, or as a user with sudo; `npm test` runs it first.
set -eu

# tool:package pairs: a tool missing from PATH means its package is to be installed.
TOOLS="redis-server:redis-server pdftotext:poppler-utils pdfinfo:poppler-utils pdftoppm:poppler-utils soffice:libreoffice-calc-nogui curl:curl chromium:chromium"

missing=""
for pair in $TOOLS; do
  tool=${pair%%:*}
  package=${pair#*:}
  if ! command -v "$tool" >/dev/null 2>&1; then
    case " $missing " in *" $package "*) ;; *) missing="$missing $package" ;; esac
  fi
done
missing=${missing# }

if [ -z "$missing" ]; then
  echo "provision: redis-server, poppler-utils, LibreOffice Calc, curl and Chromium are installed"
  exit 0
fi

install="apt-get install -y --no-install-recommends $missing"
if ! command -v apt-get >/dev/null 2>&1; then
  echo "provision: the tests need $missing, and this machine has no apt-get; install them with its package manager" >&2
  exit 1
fi
if [ "$(id -u)" = "0" ]; then
  run=""
elif command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
  run="sudo"
else
  echo "provision: the tests need $missing; as root run: apt-get update && $install" >&2
  echo "provision: (or run \`npm run provision\` as root or with sudo)" >&2
  exit 1
fi

echo "provision: installing $missing"
$run env DEBIAN_FRONTEND=noninteractive apt-get update
$run env DEBIAN_FRONTEND=noninteractive $install

#!/usr/bin/env bash
# Try the README's two commands as a new user would, on a fresh minimal Debian.
#
#   sudo bash tools/fresh_debian.sh bookworm|trixie [REPO [REF]]
#
# Builds a chroot with mmdebstrap (variant "important": required + important
# packages, plus git, python3, ca-certificates and sudo), adds a user "rocpy"
# with sudo rights, clones REPO (default: this checkout) at REF (default: HEAD)
# fresh for each command and runs the two ```sh commands of README.md's "Two
# commands" section, literally, as that user with the system python3. Prints
# each command's exit status, time and pytest summary line, and writes them to
# $WORK/summary.txt (WORK defaults to /tmp/rocpy-fresh-RELEASE; logs there).
#
# Needs root, mmdebstrap (apt-get install mmdebstrap) and the network this
# machine has: Debian's archive, and PyPI through this machine's pip
# configuration (/etc/pip.conf, /etc/xdg/pip/, PIP_* variables) and the
# certificate authorities in /usr/local/share/ca-certificates, which are copied
# into the chroot to emulate the machine's network. Not run by CI.
set -euo pipefail

release=${1:?usage: tools/fresh_debian.sh bookworm|trixie [REPO [REF]]}
here=$(cd "$(dirname "$0")/.." && pwd)
repo=${2:-$here}
ref=${3:-HEAD}
work=${WORK:-/tmp/rocpy-fresh-$release}
mirror=${DEBIAN_MIRROR:-http://deb.debian.org/debian}
root=$work/root

[ "$(id -u)" -eq 0 ] || { echo "fresh_debian: needs root (mmdebstrap, chroot)" >&2; exit 1; }
command -v mmdebstrap >/dev/null || { echo "fresh_debian: no mmdebstrap: apt-get install mmdebstrap" >&2; exit 1; }

# the README's two commands, as written there
mapfile -t commands < <(python3 - "$repo" "$ref" <<'EOF'
import re, subprocess, sys
readme = subprocess.run(["git", "-C", sys.argv[1], "show", f"{sys.argv[2]}:README.md"],
                        check=True, capture_output=True, text=True).stdout
section = readme.split("## Two commands", 1)[1].split("\n## ", 1)[0]
blocks = re.findall(r"```sh\n(.*?)```", section, re.S)
assert len(blocks) == 2, f"README's Two commands section has {len(blocks)} sh blocks"
for b in blocks:
    print(b.strip().replace("\n", " "))
EOF
)

cleanup() {
  for m in dev/shm dev/pts dev proc sys; do
    if mountpoint -q "$root/$m" 2>/dev/null; then umount -l "$root/$m" || true; fi
  done
}
trap cleanup EXIT

rm -rf "$work"
mkdir -p "$work"
echo "fresh_debian: $release chroot in $root"
t0=$(date +%s)
mmdebstrap --variant=important --include=git,python3,ca-certificates,sudo \
  "$release" "$root" "$mirror" >"$work/mmdebstrap.log" 2>&1 ||
  { tail -20 "$work/mmdebstrap.log"; echo "fresh_debian: mmdebstrap failed" >&2; exit 1; }
echo "fresh_debian: chroot built in $(($(date +%s) - t0)) s"

mount -t proc proc "$root/proc"
mount -t sysfs sys "$root/sys"
mount --bind /dev "$root/dev"
mount --bind /dev/pts "$root/dev/pts"
mount -t tmpfs -o mode=1777 shm "$root/dev/shm"   # POSIX semaphores (multiprocessing)
cp -L /etc/resolv.conf "$root/etc/resolv.conf"
# this machine's network: the certificate authorities it adds, its pip configuration
if compgen -G "/usr/local/share/ca-certificates/*.crt" >/dev/null; then
  cp /usr/local/share/ca-certificates/*.crt "$root/usr/local/share/ca-certificates/"
  chroot "$root" update-ca-certificates >/dev/null
fi
[ -e /etc/pip.conf ] && cp /etc/pip.conf "$root/etc/pip.conf"
[ -d /etc/xdg/pip ] && mkdir -p "$root/etc/xdg" && cp -r /etc/xdg/pip "$root/etc/xdg/pip"
mapfile -t pipenv < <(env | grep '^PIP_' || true)

chroot "$root" useradd -m -s /bin/bash rocpy
echo "rocpy ALL=(ALL) NOPASSWD:ALL" >"$root/etc/sudoers.d/rocpy"
chmod 440 "$root/etc/sudoers.d/rocpy"
# a branch or commit other than HEAD: the bundle holds it under a branch of its own,
# which the clone checks out (a bundle of "integ" alone has no HEAD to check out)
sha=$(git -C "$repo" rev-parse "$ref^{commit}")
branch=rocpy-fresh-$release-$$
git -C "$repo" branch -f "$branch" "$sha"
git -C "$repo" bundle create "$root/home/rocpy/rocpy.bundle" "$branch" 2>/dev/null
git -C "$repo" branch -D "$branch" >/dev/null
chown 1000:1000 "$root/home/rocpy/rocpy.bundle" 2>/dev/null ||
  chroot "$root" chown rocpy: /home/rocpy/rocpy.bundle

as_user() {  # a login-like environment of the new user, plus the pip variables
  chroot "$root" runuser -u rocpy -- env -i HOME=/home/rocpy USER=rocpy LOGNAME=rocpy \
    SHELL=/bin/bash PATH=/usr/local/bin:/usr/bin:/bin LANG=C.UTF-8 "${pipenv[@]}" \
    bash -c "$1"
}

summary=$work/summary.txt
{
  echo "release: $release ($(chroot "$root" cat /etc/debian_version)), python: $(chroot "$root" python3 -V)"
  echo "source: $repo $ref ($(git -C "$repo" rev-parse --short "$ref"))"
} >"$summary"
n=0
for cmd in "${commands[@]}"; do
  n=$((n + 1))
  log=$work/command$n.log
  echo "fresh_debian: [$n] $cmd (log: $log)"
  t0=$(date +%s)
  set +e
  as_user "git clone -q -b $branch ~/rocpy.bundle ~/clone$n && cd ~/clone$n && $cmd" >"$log" 2>&1
  rc=$?
  set -e
  secs=$(($(date +%s) - t0))
  pytest_line=$(grep -E '^(=+ )?[0-9]+ (passed|failed|error)' "$log" | tail -n 1 || true)
  {
    echo "[$n] $cmd"
    echo "    exit $rc, $secs s${pytest_line:+, pytest: $pytest_line}"
    [ "$rc" -eq 0 ] || echo "    last line: $(tail -n 1 "$log")"
  } | tee -a "$summary"
done
echo "fresh_debian: summary in $summary"

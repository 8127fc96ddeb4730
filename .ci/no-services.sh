# Sourced by .ci/install.sh: `install_without_services PKG...` installs bookworm packages without
# starting or enabling their system services. The stack runs its own sshd, redis-server, containerd
# and docker-registry as plain processes; it needs their binaries, not their services.
# - During apt-get a policy-rc.d forbids every start (invoke-rc.d and deb-systemd-invoke obey it);
#   an existing policy-rc.d is left in place, ours is removed afterwards (also on failure).
# - Afterwards each service/socket unit and init script of the packages it installed (dependencies
#   included) is disabled
#   (deb-systemd-helper, update-rc.d: they work with or without a running systemd). Packages that
#   were installed before are not passed here, so they stay as they were.
# Uses: SUDO, log; POLICY (default /usr/sbin/policy-rc.d; a test points it elsewhere).
POLICY=${POLICY:-/usr/sbin/policy-rc.d}
policy_ours=0

drop_policy() {
  if [ "$policy_ours" = 1 ]; then
    $SUDO rm -f "$POLICY"
    policy_ours=0
  fi
}

forbid_service_starts() {
  if [ ! -e "$POLICY" ]; then
    printf '#!/bin/sh\n# written by .ci/install.sh while it installs packages\nexit 101\n' | $SUDO tee "$POLICY" >/dev/null
    $SUDO chmod 755 "$POLICY"
    policy_ours=1
  fi
}

disable_services_of() {
  local pkg f unit
  for pkg in "$@"; do
    while IFS= read -r f || [ -n "$f" ]; do
      case "$f" in
      /lib/systemd/system/*.service | /lib/systemd/system/*.socket | /usr/lib/systemd/system/*.service | /usr/lib/systemd/system/*.socket)
        unit=${f##*/}
        case "$unit" in *@.*) continue ;; esac # templates are not enabled by a package
        if command -v deb-systemd-helper >/dev/null 2>&1; then
          $SUDO deb-systemd-helper disable "$unit" >/dev/null 2>&1 || true
        fi
        log "service $unit of $pkg: not started, disabled"
        ;;
      /etc/init.d/*)
        $SUDO update-rc.d "${f##*/}" disable >/dev/null 2>&1 || true
        ;;
      esac
    done < <(dpkg-query -L "$pkg" 2>/dev/null)
  done
}

installed_packages() {
  dpkg-query -W -f='${db:Status-Status} ${Package}\n' 2>/dev/null | awk '$1 == "installed" {print $2}' | sort
}

install_without_services() {
  local before
  before=$(installed_packages)
  forbid_service_starts
  trap drop_policy EXIT
  # The package lists may be absent (fresh image) or stale: update once, retry install after an
  # update. Wait for another apt/dpkg run instead of failing on its lock.
  local apt_sys=(-o DPkg::Lock::Timeout=600)
  if ! $SUDO apt-get "${apt_sys[@]}" install -y --no-install-recommends "$@"; then
    $SUDO apt-get "${apt_sys[@]}" update
    $SUDO apt-get "${apt_sys[@]}" install -y --no-install-recommends "$@"
  fi
  drop_policy
  trap - EXIT
  # Every package this run installed, dependencies included.
  local added
  added=$(comm -13 <(echo "$before") <(installed_packages))
  # shellcheck disable=SC2086 # package names have no spaces
  disable_services_of $added
}

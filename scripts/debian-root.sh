# debian-root.sh: sourced (POSIX sh) by scripts/gpu-bundle-selftest.sh and scripts/fresh-check.sh. A bare
# Debian 12 root made fresh with debootstrap (nothing cached), the kernel's file systems mounted in it,
# and its removal, which unmounts everything below it first and removes nothing while a mount is left
# (a bind mount's files are the host's own).

# dr_new NAME: a new empty folder /var/tmp/NAME.PID.XXXXXX for a root, after removing (dr_remove) the
# roots and logs of earlier runs whose process is gone: one killed outright (SIGKILL) had no trap to run
dr_new() {
    for old in /var/tmp/"$1".*.*; do
        [ -e "$old" ] || continue
        pid=${old#/var/tmp/"$1".}
        pid=${pid%%.*}
        case $pid in '' | *[!0-9]*) continue ;; esac
        [ -d "/proc/$pid" ] && continue
        if [ -d "$old" ]; then dr_remove "$old"; else rm -f "$old"; fi
    done
    mktemp -d "/var/tmp/$1.$$.XXXXXX"
}

# dr_make ROOT MIRROR LOG: debootstrap --variant=minbase bookworm into ROOT; 0, or 1 with LOG's tail
dr_make() {
    if ! debootstrap --variant=minbase bookworm "$1" "$2" >"$3" 2>&1; then
        tail -5 "$3"
        return 1
    fi
    # name resolution for apt-get inside, as on the host
    cp -L /etc/resolv.conf "$1/etc/resolv.conf" 2>/dev/null
    return 0
}

# dr_mount ROOT: /proc, /sys (read-only), a private /dev/pts and /dev/shm; debootstrap made /dev's nodes
dr_mount() {
    mount -t proc proc "$1/proc" &&
        mount -t sysfs -o ro sysfs "$1/sys" &&
        mkdir -p "$1/dev/pts" "$1/dev/shm" &&
        mount -t devpts -o newinstance,ptmxmode=0666 devpts "$1/dev/pts" &&
        mount -t tmpfs -o size=512m tmpfs "$1/dev/shm"
}

# dr_mounts ROOT: the mount points below ROOT, deepest first
dr_mounts() {
    awk -v r="$1" '$2 == r || index($2, r "/") == 1 {print $2}' /proc/self/mounts | sort -r
}

# dr_remove ROOT: unmount everything below ROOT, then remove it; says so and keeps it if a mount stays
dr_remove() {
    [ -n "$1" ] && [ -d "$1" ] || return 0
    for m in $(dr_mounts "$1"); do umount "$m" 2>/dev/null || umount -l "$m" 2>/dev/null; done
    if [ -n "$(dr_mounts "$1")" ]; then
        echo "debian-root: $1 still has mounts ($(dr_mounts "$1" | tr '\n' ' ')): not removed" >&2
        return 1
    fi
    rm -rf "$1"
}

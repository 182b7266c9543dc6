#!/usr/bin/env bash
# Install the toolchains that the bot starters' tests build with, where they are missing:
# Java (javac, mvn) for `moon new-bot --lang java`, CMake and a C++ compiler for `--lang
# cpp`, Node.js and npm for `--lang node|typescript` (and buf). Debian packages, as root;
# anything already on PATH is left alone, so on a machine that has them this does nothing.
# Without root or apt-get it only says what is missing: those tests then skip with the reason.
set -euo pipefail

say() { echo "toolchains: $*" >&2; }

# command -> Debian package
declare -A PACKAGE=([javac]=default-jdk-headless [mvn]=maven [cmake]=cmake [c++]=g++
                    [node]=nodejs [npm]=npm)
missing=()
for tool in javac mvn cmake c++ node npm; do
    command -v "$tool" >/dev/null 2>&1 || missing+=("${PACKAGE[$tool]}")
done
if [ ${#missing[@]} = 0 ]; then
    exit 0
fi
if [ "$(id -u)" != 0 ] || ! command -v apt-get >/dev/null 2>&1; then
    say "missing ${missing[*]} (not root, or no apt-get): their tests will skip"
    exit 0
fi
say "installing ${missing[*]} (apt-get)"
export DEBIAN_FRONTEND=noninteractive
apt-get -o DPkg::Lock::Timeout=600 update -qq
apt-get -o DPkg::Lock::Timeout=600 install -y -qq "${missing[@]}" >/dev/null

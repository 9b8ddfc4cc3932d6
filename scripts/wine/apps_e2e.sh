# The one-click apps' environments end to end under wine, sourced by
# scripts/test-windows.sh (which defines work, wine, winpath, mkvenv,
# e2e_fail, step and failed).
#
# Each app's layout is made where Windows users unpack or install it, in
# the prefix's profile and on C:\ (never under the Linux home: a profile
# folder that wine links to one is replaced by a folder first):
#   - Desktop\My AI\ComfyUI_windows_portable: ComfyUI's portable release,
#     an embedded Python 3.12 (python312._pth with ../ComfyUI and
#     `import site`) with a CPU torch;
#   - Downloads\StabilityMatrix\Data: a portable Stability Matrix
#     (.sm-portable) with Packages\ComfyUI\venv;
#   - Documents\stable-diffusion-webui\venv: AUTOMATIC1111's checkout;
#   - %LOCALAPPDATA%\Programs\text-generation-webui\installer_files\env,
#     a conda prefix;
#   - C:\pinokio\api\comfy.git\app\env: Pinokio's home at a drive's root.
# A search its time budget stops (wine's file access is slow) must say
# why.
# `gpucanary.exe check --json` with no path, under a simulated RTX 5090
# on driver 570, must find each, name its app, and give the embedded
# Python's CPU torch TORCH_CPU_BUILD with its own pip's repair
# command, quoted for PowerShell (the path holds a space).

ae=$work/apps-e2e
mkdir -p "$ae"
profile=$(ls -d "$WINEPREFIX"/drive_c/users/*/ | grep -v '/Public/$' | head -1)
profile=${profile%/}
for d in Desktop Downloads Documents; do
  [ -L "$profile/$d" ] && rm "$profile/$d"
  mkdir -p "$profile/$d"
done
user=$(basename "$profile")

# mkembedded DIR VERSION: an embedded Python 3.12 as ComfyUI ships it,
# with torch VERSION and pip in Lib\site-packages.
mkembedded() {
  local dir=$1 version=$2 site=$1/Lib/site-packages
  mkdir -p "$site/torch/lib" "$site/torch-$version.dist-info" "$site/pip"
  for f in python.exe pythonw.exe python3.dll python312.dll; do printf 'MZ' >"$dir/$f"; done
  printf 'PK\005\006' >"$dir/python312.zip"
  printf '../ComfyUI\npython312.zip\n.\n\n# Uncomment to run site.main() automatically\n#import site\nimport site\n' >"$dir/python312._pth"
  printf 'Metadata-Version: 2.1\nName: torch\nVersion: %s\n' "$version" >"$site/torch-$version.dist-info/METADATA"
  printf 'pip\n' >"$site/torch-$version.dist-info/INSTALLER"
  printf "__version__ = '%s'\ndebug = False\ncuda = None\nhip = None\n" "$version" >"$site/torch/version.py"
  : >"$site/torch/__init__.py"
  : >"$site/pip/__init__.py"
  cp "$work/procstub/runtime.dll" "$site/torch/lib/torch_cpu.dll"
}

comfy="$profile/Desktop/My AI/ComfyUI_windows_portable"
mkembedded "$comfy/python_embeded" 2.7.0+cpu
mkdir -p "$comfy/ComfyUI"
: >"$comfy/ComfyUI/main.py"
printf '.\\python_embeded\\python.exe -s ComfyUI\\main.py --windows-standalone-build\r\npause\r\n' >"$comfy/run_nvidia_gpu.bat"

sm=$profile/Downloads/StabilityMatrix/Data
mkvenv "$sm/Packages/ComfyUI/venv" 2.5.1+cu121 torch_cuda.dll
: >"$sm/.sm-portable"
printf '{}\n' >"$sm/settings.json"

a1111=$profile/Documents/stable-diffusion-webui
mkvenv "$a1111/venv" 2.5.1+cu121 torch_cuda.dll
: >"$a1111/webui.py"

tgw=$profile/AppData/Local/Programs/text-generation-webui
tgwenv=$tgw/installer_files/env
mkdir -p "$tgwenv/conda-meta" "$tgwenv/Lib/site-packages"
printf 'MZ' >"$tgwenv/python.exe"
printf '{"name": "python", "version": "3.11.9", "build": "h4de0772_0", "channel": "https://conda.anaconda.org/conda-forge", "files": [], "depends": []}\n' >"$tgwenv/conda-meta/python-3.11.9-h4de0772_0.json"
: >"$tgw/one_click.py"

pinokio=$WINEPREFIX/drive_c/pinokio
mkvenv "$pinokio/api/comfy.git/app/env" 2.5.1+cu121 torch_cuda.dll
printf 'PINOKIO_DRIVE=./drive\n' >"$pinokio/ENVIRONMENT"
mkdir -p "$pinokio/bin"

cat >"$ae/rtx5090.json" <<'EOF'
{"driver": "570.86.10", "cuda_driver": "12.8",
 "devices": [{"name": "NVIDIA GeForce RTX 5090", "uuid": "GPU-5090", "compute_capability": "12.0",
              "memory_total_bytes": 34190917632, "processes": []}]}
EOF
code=0
(cd "$ae" && NO_COLOR=1 XDG_CONFIG_HOME= "$wine" "$work/bin/gpucanary.exe" --gpu-sim "$(winpath "$ae/rtx5090.json")" \
  check --json >"$work/out" 2>"$ae/stderr") || code=$?
win='C:\users\'"$user"
if ! python3 - "$work/out" "$win" <<'EOF'
import json, sys
r = json.load(open(sys.argv[1]))
home = sys.argv[2]
want = {
    home + r"\Desktop\My AI\ComfyUI_windows_portable\python_embeded": "ComfyUI portable",
    home + r"\Downloads\StabilityMatrix\Data\Packages\ComfyUI\venv": "Stability Matrix (ComfyUI)",
    home + r"\Documents\stable-diffusion-webui\venv": "AUTOMATIC1111",
    home + r"\AppData\Local\Programs\text-generation-webui\installer_files\env": "text-generation-webui",
    r"C:\pinokio\api\comfy.git\app\env": "Pinokio (comfy.git)",
}
envs = {e["path"].lower(): e for e in r["envs"]}
bad = []
for path, app in want.items():
    e = envs.get(path.lower())
    if e is None:
        bad.append("not found: %s (%s)" % (path, app))
    elif e.get("app") != app:
        bad.append("%s: app %r, want %r" % (path, e.get("app"), app))
comfy = envs.get(list(want)[0].lower())
if comfy is not None:
    fs = comfy["findings"]
    py = list(want)[0] + r"\python.exe"
    if comfy["kind"] != "embedded" or not fs or fs[0]["code"] != "TORCH_CPU_BUILD" or \
            not fs[0]["fix"].lower().startswith(('& "%s" -s -m pip install ' % py).lower()):
        bad.append("ComfyUI portable: kind %s, findings %s" % (comfy["kind"], json.dumps(fs)[:600]))
if not r["complete"] and not r.get("search_stopped"):
    bad.append("the search stopped early without saying why")
print("search complete: %s %s" % (r["complete"], r.get("search_stopped", "")))
for b in bad:
    print(b)
sys.exit(1 if bad else 0)
EOF
then
  e2e_fail "check --json did not find and name the apps (exit $code): see above; stderr: $(head -c 2000 "$ae/stderr")"
else
  step "e2e: check finds and names ComfyUI portable, Stability Matrix, A1111, text-generation-webui, Pinokio"
fi

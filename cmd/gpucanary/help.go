package main

// Each command's whole help, as `gpucanary CMD --help` and `gpucanary
// help CMD` print it: usage, what it does, every flag, examples and the
// exit status. TestEveryFlagIsDocumented fails on a flag missing here.

const simFlagHelp = `  --gpu-sim FILE       replace NVML with a simulated GPU read from FILE
                       (docs/json.md, "GPU scenario file"); also before
                       the command`

const checkHelp = `Usage: gpucanary check [--json] [--format text|json|prom [--textfile PATH]] [PATH...]

Inspects Python environments and the GPU, and prints what is wrong in each
with the exact command that fixes it. It reads files only (Python is never
started). Without PATH it checks the environments it finds on this machine:
the active one, the current folder, your home folder and the configured
roots.

Flags:
  --json               print JSON (the same as --format json; another
                       --format with it is an error)
  --format FORMAT      text (the default), json, or prom: Prometheus metrics,
                       as the agent serves them
  --textfile PATH      with --format prom: write the metrics to PATH
                       atomically, for node_exporter's textfile collector
` + simFlagHelp + `

Examples:
  gpucanary check
  gpucanary check ~/llm/.venv ~/sd/.venv
  gpucanary check --json ~/llm/.venv | jq '.envs[].findings[].code'
  gpucanary check --format prom --textfile /var/lib/prometheus/node-exporter/gpucanary.prom
  RUN gpucanary-cli check /opt/venv     (a Dockerfile: the build fails when torch cannot use the GPU)

Exit status: 0 no error findings, 1 error findings (a PATH that names no
environment is one, reported as ENV_UNREADABLE while the others are still
checked), 2 usage or internal error.
`

const psHelp = `Usage: gpucanary ps [--json] [--watch] [-w]

Lists the processes that hold GPU memory or have an ML runtime loaded
(torch, llama.cpp, ...): the GPU memory each holds, its environment, and a
verdict: gpu, cpu (a CPU build while a GPU is there), cuda-idle (a CUDA
build that holds no GPU memory), orphaned (a PID the driver lists that no
longer runs) or other. Above them, each GPU with its utilization,
temperature, power and memory ("-" where the driver does not say). The
command shows the program by its name, then the script and its arguments.
On a terminal the table fits its width (the command is cut at its end);
piped, or with -w, nothing is cut.

Flags:
  --json               print JSON: hostname, query_time, the GPU and the
                       processes; with --watch, one such object a line at
                       each refresh (JSON lines)
  --watch              refresh every 2 s, as top does; on a terminal q quits
                       (Ctrl-C always does)
  -w                   wide: never cut a line to the terminal's width (as
                       ps -ww)
` + simFlagHelp + `

Examples:
  gpucanary ps
  gpucanary ps --watch
  gpucanary ps --json | jq '.processes[] | select(.verdict == "cpu") | .pid'
  gpucanary ps --watch --json >>gpucanary-ps.jsonl

Exit status: 0, or 2 on usage or when processes cannot be read.
`

const watchHelp = `Usage: gpucanary watch [--json] [--all] [PATH...]

Runs the engine headless, as the tray does: first says which GPU it sees
and which environments it watches (and how each was found), then prints
each event as it happens (a CUDA torch overwritten by an install, a job
computing on the CPU, a finding raised or cleared), naming its
environment, until interrupted. Watches PATH... or, without them, the
environments it finds.

Flags:
  --json               print every event as one JSON object a line
  --all                print every event, not only those the notification
                       settings would show
` + simFlagHelp + `

Examples:
  gpucanary watch
  gpucanary watch --all ~/llm/.venv
  gpucanary watch --json >>gpucanary-events.jsonl

Exit status: runs until interrupted (0); 1 when a PATH names no environment
(its finding is printed first, and the others are watched); 2 on usage.
`

const waitHelp = `Usage: gpucanary wait [--json] PID...

Waits until every process PID... has ended, and says how each ended as it
does: finished or crashed, with what that rests on. Any process will do,
one GPU Canary did not start included. On Linux the exit status of another
program's process is not visible, so the reason comes, in order, from: the
status of a process its parent has not reaped yet, the kernel's OOM killer,
the end of the file its output went to (a CUDA out-of-memory error, a CUDA
error, a Python traceback: the line is quoted; a log that ends without one
is finished), and how full its GPU's memory was just before (said as
"probably"). With nothing to go on it says so. On Windows the exit code is
read. Start a long job with its output in a file (python train.py
>train.log 2>&1) so that how it ended can be told.

Flags:
  --json               print one JSON object a line, one per PID as it
                       ends: how (finished, crashed or unknown), reason,
                       quote, log, exit_code or signal, command, run time
` + simFlagHelp + `

Examples:
  gpucanary wait 4242 && python eval.py
  gpucanary wait --json $(pgrep -f train.py)

Exit status: 0 when every process is known to have finished, 1 when any
crashed or ended in a way nothing tells, 2 when an argument is not the PID
of a running process (nothing is waited for), 130 when interrupted (Ctrl-C)
first.
`

const fixHelp = `Usage: gpucanary fix PATH [--dry-run] [--yes] [--variant cuNNN] [--index-base URL] [--llama-index-base URL] [--force] [--timeout D]
       gpucanary fix --pin-index PATH [--variant cuNNN] [--index-base URL]

Reinstalls a CUDA build of torch, with its companions at matching
versions, in the environment at PATH, through the environment's own
installer. A change of build or release installs the exact pins without
--no-deps, so the NVIDIA runtime wheels a CUDA torch requires come from
the same index; a repair of the builds already installed is forced with
--no-deps (unless runtime wheels are missing). It shows the plan
(installer, packages, the CUDA variant this driver and GPU allow, the
index, and why; a newer torch when no build of the installed one runs
here, or the last release with kernels for a GPU newer releases dropped,
saying what else changes), asks, runs the installer, verifies by reading
the environment again, and journals the run with the command that puts
back what was there.

Where torch is right and llama-cpp-python is a CPU build
(LLAMA_CPP_CPU_BUILD), it reinstalls the same llama-cpp-python release,
forced with --no-deps, from the newest of llama-cpp-python's CUDA wheel
indexes whose CUDA this driver supports, and verifies its CUDA backend;
where no wheel fits (an old driver, a platform without CUDA wheels) it
runs nothing, says why and gives the build from source to run by hand.
An error fix does not repair is named with its fix command, and fix
exits 1: it says "Nothing to fix" only when check finds no error.

Flags:
  --dry-run            show the plan and change nothing
  --yes                do not ask before reinstalling
  --variant cuNNN      install this CUDA variant (cu118, cu121, cu124, ...)
                       instead of the one chosen for this driver and GPU
  --index-base URL     the PyTorch wheel index base, URL/cuNNN being the
                       index (default: the settings' mirror, else
                       https://download.pytorch.org/whl)
  --llama-index-base URL
                       llama-cpp-python's CUDA wheel index base, URL/cuNNN
                       being the index (default: the settings' mirror, else
                       https://abetlen.github.io/llama-cpp-python/whl)
  --force              reinstall even while processes of the environment
                       run (by default fix refuses)
  --timeout D          stop the installer after D, a duration above zero
                       such as 45m or 2h (default 30m)
  --pin-index          instead of reinstalling, pin torch to its CUDA index
                       in the uv project's pyproject.toml, so that the next
                       uv run cannot undo the fix
` + simFlagHelp + `

Examples:
  gpucanary fix ~/llm/.venv --dry-run
  gpucanary fix ~/llm/.venv --yes --variant cu121
  gpucanary fix ~/llm/.venv --index-base https://mirror.example.com/pytorch-whl
  gpucanary fix ~/llm/.venv --force --timeout 1h
  gpucanary fix --pin-index ~/llm/.venv

Exit status: 0 fixed and verified, or nothing to fix; 1 not fixed
(refused, declined, the installer failed, or an error it does not
repair remains), 2 usage (not exactly one PATH, a bad flag or value).
`

const reportHelp = `Usage: gpucanary report [-o DIR] [PATH...]
       gpucanary report --job PID [-o DIR]

Writes the evidence bundle into DIR, a folder to attach to a bug report or
keep beside a training run: README.md, env_info.md (the machine, driver,
GPUs, every environment with its packages and findings, the GPU
workloads), gpu.json, processes.json and check.json. Command lines are
redacted and no environment variable is recorded. Covers PATH... or,
without them, the environments it finds.

With --job PID it writes what happened to that job instead: README.md
(its command, environment and verdict, start, end and run time, how it
ended, its last 30 minutes of GPU samples as a table, the driver, and
the events within 5 minutes of its end) and job.json. The samples are
recorded by the tray, ` + "`gpucanary watch`" + ` or ` + "`gpucanary agent`" + ` while the job
runs and kept for the last 16 jobs that ended; for a job still running
it says what is known now. A PID that is no job's is exit status 2.

Flags:
  -o DIR               the folder to write, new or empty (default
                       gpucanary-report-YYYYMMDD-HHMMSS here)
  --job PID            report on the job with this process ID
` + simFlagHelp + `

Examples:
  gpucanary report
  gpucanary report -o /tmp/evidence ~/llm/.venv ~/sd/.venv

Exit status: 0 written; 2 when DIR holds files or cannot be written, or on
usage.
`

const versionHelp = `Usage: gpucanary version
       gpucanary --version

Prints the version of this binary, the commit it was built from and when.
It takes no flags and no arguments.

Examples:
  gpucanary version
  gpucanary --version

Exit status: 0; 2 when given arguments or flags.
`

const helpHelp = `Usage: gpucanary help [COMMAND]

Prints the list of commands, or COMMAND's help: its flags, examples and
exit status (the same as gpucanary COMMAND --help). It takes no flags.

Examples:
  gpucanary help
  gpucanary help fix

Exit status: 0; 2 for a command that does not exist, or more than one.
`

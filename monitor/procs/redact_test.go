package procs

import (
	"slices"
	"strings"
	"testing"
)

func TestRedact(t *testing.T) {
	tests := []redactCase{
		{"--token=", []string{"python", "train.py", "--token=abc123"}, []string{"python", "train.py", "--token=***"}},
		{"--token VALUE", []string{"python", "train.py", "--hf-token", "abc123", "--lr", "3e-4"}, []string{"python", "train.py", "--hf-token", "***", "--lr", "3e-4"}},
		{"HF_TOKEN=", []string{"env", "HF_TOKEN=hf_xyz", "python"}, []string{"env", "HF_TOKEN=***", "python"}},
		{"api_key= and --password", []string{"serve", "api_key=sk-123", "--password", "pw"}, []string{"serve", "api_key=***", "--password", "***"}},
		{"--secret", []string{"x", "--client-secret", "s", "--api-key=k"}, []string{"x", "--client-secret", "***", "--api-key=***"}},
		{"--pass VALUE", []string{"rsync", "--pass", "hunter2", "src"}, []string{"rsync", "--pass", "***", "src"}},
		{"--auth=", []string{"jupyter", "--auth=abc:def"}, []string{"jupyter", "--auth=***"}},
		{"--passphrase", []string{"gpg", "--passphrase", "p"}, []string{"gpg", "--passphrase", "***"}},
		{"MYSQL_PWD=", []string{"env", "MYSQL_PWD=hunter2", "mysql"}, []string{"env", "MYSQL_PWD=***", "mysql"}},
		{"PGPASSWORD=", []string{"env", "PGPASSWORD=pg", "psql", "-p", "5432"}, []string{"env", "PGPASSWORD=***", "psql", "-p", "5432"}},
		{"AWS_SECRET_ACCESS_KEY=", []string{"env", "AWS_SECRET_ACCESS_KEY=abc/def"}, []string{"env", "AWS_SECRET_ACCESS_KEY=***"}},
		{"PRIVATE_KEY=", []string{"x", "PRIVATE_KEY=----"}, []string{"x", "PRIVATE_KEY=***"}},
		{"mysql -p VALUE", []string{"mysql", "-u", "root", "-p", "hunter2", "db"}, []string{"mysql", "-u", "root", "-p", "***", "db"}},
		{"mysql -pVALUE", []string{"/usr/bin/mysql", "-uroot", "-phunter2"}, []string{"/usr/bin/mysql", "-uroot", "-p***"}},
		{"sudo mysqldump -pVALUE", []string{"sudo", "-E", "mysqldump", "-phunter2"}, []string{"sudo", "-E", "mysqldump", "-p***"}},
		// sshpass's -p also hides the -p of the ssh it runs: the safe side.
		{"timeout 10 sshpass -p", []string{"timeout", "10", "sshpass", "-p", "pw", "ssh", "host"}, []string{"timeout", "10", "sshpass", "-p", "***", "ssh", "host"}},
		{"redis-cli -a", []string{"redis-cli", "-a", "pw", "ping"}, []string{"redis-cli", "-a", "***", "ping"}},
		{"curl -u user:pass", []string{"curl", "-u", "ada:pw", "https://h"}, []string{"curl", "-u", "ada:***", "https://h"}},
		{"-p elsewhere is not a password", []string{"uv", "pip", "install", "-p", "/home/ada/.venv", "torch"}, []string{"uv", "pip", "install", "-p", "/home/ada/.venv", "torch"}},
		{"ssh -p is a port", []string{"ssh", "-p", "2222", "host"}, []string{"ssh", "-p", "2222", "host"}},
		{"URL credentials", []string{"pip", "install", "--index-url", "https://user:s3cret@pypi.example.com/simple"}, []string{"pip", "install", "--index-url", "https://user:***@pypi.example.com/simple"}},
		{"URL credentials inside an option", []string{"pip", "--extra-index-url=https://u:p@h/simple"}, []string{"pip", "--extra-index-url=https://u:***@h/simple"}},
		{"URL query token", []string{"wget", "https://h/f?x=1&access_token=abc&y=2"}, []string{"wget", "https://h/f?x=1&access_token=***&y=2"}},
		{"Authorization header", []string{"curl", "-H", "Authorization: Bearer abc"}, []string{"curl", "-H", "Authorization: ***"}},
		{"header without a space", []string{"curl", "-H", "X-Api-Key:abcdef"}, []string{"curl", "-H", "X-Api-Key:***"}},
		{"bearer on its own", []string{"client", "--header-value", "Bearer abcdef123456"}, []string{"client", "--header-value", "Bearer ***"}},
		{"token shapes", []string{"python", "push.py", "hf_abcdefghijklmnopqrstu", "ghp_abcdefghijklmnopqrstu1234"}, []string{"python", "push.py", "***", "***"}},
		{"URL without credentials", []string{"git", "clone", "https://example.com/repo.git"}, []string{"git", "clone", "https://example.com/repo.git"}},
		{"no secret", []string{"python", "--author", "me", "--lr=3", "--tokenizer", "gpt2", "--max-tokens", "100", "--key-file", "k.pem"},
			[]string{"python", "--author", "me", "--lr=3", "--tokenizer", "gpt2", "--max-tokens", "100", "--key-file", "k.pem"}},
		{"Windows paths", []string{`C:\Users\ada\.venv\Scripts\python.exe`, `C:\data`}, []string{`C:\Users\ada\.venv\Scripts\python.exe`, `C:\data`}},
		{"secret flag last", []string{"python", "--token"}, []string{"python", "--token"}},
		// Issue 32, L10: a signed URL's signature, and --key VALUE.
		{"SAS sig=", []string{"azcopy", "copy", "https://a.blob.core.windows.net/c/f?sv=2022&sig=abc%2Fdef&se=x"}, []string{"azcopy", "copy", "https://a.blob.core.windows.net/c/f?sv=2022&sig=***&se=x"}},
		{"S3 X-Amz-Signature=", []string{"curl", "https://b.s3.amazonaws.com/k?X-Amz-Date=1&X-Amz-Signature=f00d"}, []string{"curl", "https://b.s3.amazonaws.com/k?X-Amz-Date=1&X-Amz-Signature=***"}},
		{"--key VALUE", []string{"python", "serve.py", "--key", "s3cr3t", "--port", "8000"}, []string{"python", "serve.py", "--key", "***", "--port", "8000"}},
		{"--key=VALUE", []string{"python", "serve.py", "--key=s3cr3t"}, []string{"python", "serve.py", "--key=***"}},
		{"key= in a query", []string{"wget", "https://maps.example/api?key=AIzaXYZ&q=1"}, []string{"wget", "https://maps.example/api?key=***&q=1"}},
		{"--sort-key and --key-file stay", []string{"sort", "--sort-key", "2", "--key-file", "k.pem"}, []string{"sort", "--sort-key", "2", "--key-file", "k.pem"}},
	}
	checkRedact(t, tests)
}

// TestRedactLine: a line of an installer's own output is redacted as an
// argument is (issue 32, L10: pip printed its index URL's token).
func TestRedactLine(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"Looking in indexes: https://mirror.example/whl/cu124?token=abc123", "Looking in indexes: https://mirror.example/whl/cu124?token=***"},
		{"Looking in indexes: https://ada:hunter2@mirror.example/whl/cu124", "Looking in indexes: https://ada:***@mirror.example/whl/cu124"},
		{"  Downloading https://blob.example/torch.whl?sv=1&sig=c2lnbmF0dXJl (908.2 MB)", "  Downloading https://blob.example/torch.whl?sv=1&sig=*** (908.2 MB)"},
		{"Successfully installed torch-2.5.1+cu124", "Successfully installed torch-2.5.1+cu124"},
		{"Collecting torch==2.5.1+cu124", "Collecting torch==2.5.1+cu124"},
	} {
		if got := RedactLine(c.in); got != c.want {
			t.Errorf("RedactLine(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

type redactCase struct {
	name     string
	in, want []string
}

// checkRedact runs Redact over the table: each row's result, and that no
// secret of the row's input is left anywhere in the line.
func checkRedact(t *testing.T, tests []redactCase) {
	t.Helper()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Redact(tt.in)
			if !slices.Equal(got, tt.want) {
				t.Errorf("Redact(%q)\n got %q\nwant %q", tt.in, got, tt.want)
			}
			// Whatever was hidden must be gone from the whole line.
			line := strings.Join(got, " ")
			for _, secret := range []string{"hunter2", "s3cret", "abc123", "hf_xyz", "sk-123", "pg-secret", "sec ret"} {
				if strings.Contains(strings.Join(tt.in, " "), secret) && strings.Contains(line, secret) {
					t.Errorf("%q still shows %q", line, secret)
				}
			}
		})
	}
}

// TestRedactShellStrings: a secret inside one argument that is a shell
// command line (or a program's code) is hidden where it stands, and the
// rest of the string stays readable.
func TestRedactShellStrings(t *testing.T) {
	checkRedact(t, []redactCase{
		{"bash -c mysql -pX", []string{"bash", "-c", "mysql -phunter2 db"}, []string{"bash", "-c", "mysql -p*** db"}},
		{"sh -c curl -u user:pass", []string{"/bin/sh", "-c", "curl -u ada:hunter2 https://h/x"}, []string{"/bin/sh", "-c", "curl -u ada:*** https://h/x"}},
		{"python -c password=", []string{"python3", "-c", "import db; db.connect(host='h', password='hunter2')"},
			[]string{"python3", "-c", "import db; db.connect(host='h', password='***')"}},
		{"a leading assignment keeps the command", []string{"bash", "-lc", "PGPASSWORD=pg-secret psql -h db -p 5432"}, []string{"bash", "-lc", "PGPASSWORD=*** psql -h db -p 5432"}},
		{"commands joined by operators", []string{"bash", "-o", "pipefail", "-c", "cd /srv && mysqldump -uroot -phunter2 db | gzip > db.gz"},
			[]string{"bash", "-o", "pipefail", "-c", "cd /srv && mysqldump -uroot -p*** db | gzip > db.gz"}},
		{"a string in a string keeps its quotes", []string{"bash", "-c", "sudo sh -c 'mysql -phunter2'"}, []string{"bash", "-c", "sudo sh -c 'mysql -p***'"}},
		{"su -c", []string{"su", "-", "postgres", "-c", "psql 'host=db password=hunter2'"}, []string{"su", "-", "postgres", "-c", "psql 'host=db password=***'"}},
		{"fish --command=", []string{"fish", "--command=redis-cli -a hunter2 ping"}, []string{"fish", "--command=redis-cli -a *** ping"}},
		{"a shell string deeper in another program's argv", []string{"docker", "exec", "db", "sh", "-c", "mysql -phunter2"}, []string{"docker", "exec", "db", "sh", "-c", "mysql -p***"}},
		{"watch's command", []string{"watch", "-n", "5", "redis-cli -a hunter2 info"}, []string{"watch", "-n", "5", "redis-cli -a *** info"}},
		{"a title holding a whole command line", []string{"python train.py --password hunter2 --lr 3"}, []string{"python train.py --password *** --lr 3"}},
		// A control: a port is not a password, inside a string too.
		{"no secret in the string", []string{"bash", "-c", "ssh -p 2222 host 'python train.py -p 5'"}, []string{"bash", "-c", "ssh -p 2222 host 'python train.py -p 5'"}},
	})
}

// TestRedactPastWrappers: the program's own password options count past
// wrappers whose options take values or that take operands.
func TestRedactPastWrappers(t *testing.T) {
	checkRedact(t, []redactCase{
		{"sudo -u bob", []string{"sudo", "-u", "bob", "mysql", "-phunter2"}, []string{"sudo", "-u", "bob", "mysql", "-p***"}},
		{"sudo -Eu bob", []string{"sudo", "-Eu", "bob", "mysql", "-p", "hunter2"}, []string{"sudo", "-Eu", "bob", "mysql", "-p", "***"}},
		{"doas -u bob", []string{"doas", "-u", "bob", "redis-cli", "-a", "hunter2"}, []string{"doas", "-u", "bob", "redis-cli", "-a", "***"}},
		{"env -u X NAME=value", []string{"env", "-u", "DISPLAY", "MYSQL_PWD=hunter2", "mysql", "-phunter2"}, []string{"env", "-u", "DISPLAY", "MYSQL_PWD=***", "mysql", "-p***"}},
		{"taskset -c 0-3", []string{"taskset", "-c", "0-3", "mysql", "-phunter2"}, []string{"taskset", "-c", "0-3", "mysql", "-p***"}},
		{"nice -n +5", []string{"nice", "-n", "+5", "mysql", "-phunter2"}, []string{"nice", "-n", "+5", "mysql", "-p***"}},
		{"timeout -s KILL 10", []string{"timeout", "-s", "KILL", "10", "mysql", "-phunter2"}, []string{"timeout", "-s", "KILL", "10", "mysql", "-p***"}},
		{"ionice -c idle", []string{"ionice", "-c", "idle", "mysql", "-phunter2"}, []string{"ionice", "-c", "idle", "mysql", "-p***"}},
		{"stdbuf -o L", []string{"stdbuf", "-o", "L", "mysql", "-phunter2"}, []string{"stdbuf", "-o", "L", "mysql", "-p***"}},
		{"time -f FORMAT", []string{"/usr/bin/time", "-f", "%e", "mysql", "-phunter2"}, []string{"/usr/bin/time", "-f", "%e", "mysql", "-p***"}},
		{"wrappers in a row", []string{"sudo", "-u", "bob", "nice", "-n", "+5", "timeout", "-s", "KILL", "1h", "curl", "-u", "ada:hunter2", "https://h"},
			[]string{"sudo", "-u", "bob", "nice", "-n", "+5", "timeout", "-s", "KILL", "1h", "curl", "-u", "ada:***", "https://h"}},
		{"a wrapper's value is not the program", []string{"sudo", "-u", "mysql", "ssh", "-p", "2222", "host"}, []string{"sudo", "-u", "mysql", "ssh", "-p", "2222", "host"}},
		{"ssh's remote command", []string{"ssh", "-p", "2222", "-i", "key", "db.example", "mysql", "-phunter2"}, []string{"ssh", "-p", "2222", "-i", "key", "db.example", "mysql", "-p***"}},
		{"ssh's destination is not the program", []string{"ssh", "-l", "ada", "redis-cli", "redis-cli", "-a", "hunter2"}, []string{"ssh", "-l", "ada", "redis-cli", "redis-cli", "-a", "***"}},
		{"ssh with no command", []string{"ssh", "-p", "2222", "host"}, []string{"ssh", "-p", "2222", "host"}},
		{"cmd /c", []string{`C:\Windows\System32\cmd.exe`, "/s", "/c", "mysql", "-phunter2"}, []string{`C:\Windows\System32\cmd.exe`, "/s", "/c", "mysql", "-p***"}},
		{"cmd /c a whole string", []string{"cmd.exe", "/c", "mysql -u root -phunter2 db"}, []string{"cmd.exe", "/c", "mysql -u root -p*** db"}},
	})
}

// TestRedactConnectionStrings: libpq's key=value connection strings.
func TestRedactConnectionStrings(t *testing.T) {
	checkRedact(t, []redactCase{
		{"key=value", []string{"psql", "host=db password=hunter2 user=ada"}, []string{"psql", "host=db password=*** user=ada"}},
		{"a quoted value", []string{"psql", "host=db password='sec ret' user=ada"}, []string{"psql", "host=db password='***' user=ada"}},
		{"an escaped quote in the value", []string{"psql", `host=db password='hunter2\' x' user=ada`}, []string{"psql", "host=db password='***' user=ada"}},
		{"JSON", []string{"python", "serve.py", `{"model": "m", "api_key": "hunter2"}`}, []string{"python", "serve.py", `{"model": "m", "api_key": "***"}`}},
	})
}

// TestRedactOptionWithoutValue: a secret option with no value of its own
// hides the next word, unless that word ends the options.
func TestRedactOptionWithoutValue(t *testing.T) {
	checkRedact(t, []redactCase{
		// After --, the word is an operand, not the option's value (getopt
		// and Go's flag take -- as the value itself; argparse refuses).
		{"--password --", []string{"tool", "--password", "--", "db"}, []string{"tool", "--password", "--", "db"}},
		{"mysql -p --", []string{"mysql", "-p", "--", "db"}, []string{"mysql", "-p", "--", "db"}},
		// An empty value then a word: it may be the password.
		{"--password= X", []string{"tool", "--password=", "hunter2"}, []string{"tool", "--password=", "***"}},
	})
}

// TestRedactFormsAlreadyCovered are forms the audit asked about that
// Redact hid before it: kept so that they stay hidden.
func TestRedactFormsAlreadyCovered(t *testing.T) {
	checkRedact(t, []redactCase{
		{"postgresql:// URL", []string{"psql", "postgresql://ada:hunter2@db/app"}, []string{"psql", "postgresql://ada:***@db/app"}},
		{"URL password parameter", []string{"psql", "postgresql://ada@db/app?sslmode=require&password=hunter2"}, []string{"psql", "postgresql://ada@db/app?sslmode=require&password=***"}},
		{"taskset then --password", []string{"taskset", "-c", "0-3", "mysql", "--password", "hunter2"}, []string{"taskset", "-c", "0-3", "mysql", "--password", "***"}},
		{"nice -n 5", []string{"nice", "-n", "5", "mysql", "-phunter2"}, []string{"nice", "-n", "5", "mysql", "-p***"}},
		{"timeout 10", []string{"timeout", "10", "mysql", "-phunter2"}, []string{"timeout", "10", "mysql", "-p***"}},
	})
}

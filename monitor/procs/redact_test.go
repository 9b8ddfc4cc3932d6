package procs

import (
	"slices"
	"strings"
	"testing"
)

func TestRedact(t *testing.T) {
	tests := []struct {
		name     string
		in, want []string
	}{
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
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Redact(tt.in)
			if !slices.Equal(got, tt.want) {
				t.Errorf("Redact(%q) = %q, want %q", tt.in, got, tt.want)
			}
			// Whatever was hidden must be gone from the whole line.
			line := strings.Join(got, " ")
			for _, secret := range []string{"hunter2", "s3cret", "abc123", "hf_xyz", "sk-123"} {
				if strings.Contains(strings.Join(tt.in, " "), secret) && strings.Contains(line, secret) {
					t.Errorf("%q still shows %q", line, secret)
				}
			}
		})
	}
}

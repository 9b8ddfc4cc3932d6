/* lnktarget LNK: prints the target of the shell link LNK as the Windows
 * shell reads it (IShellLink through IPersistFile::Load), or exits 1.
 * scripts/wine/msi_e2e.sh runs it on the Start-menu shortcut after GPU
 * Canary wrote its AppUserModelID into it, to show the shell still reads
 * the file. */
#define COBJMACROS
#include <windows.h>
#include <shobjidl.h>
#include <stdio.h>

int wmain(int argc, wchar_t **argv) {
  IShellLinkW *link;
  IPersistFile *file;
  wchar_t target[MAX_PATH];
  if (argc != 2) return 2;
  if (FAILED(CoInitializeEx(NULL, COINIT_APARTMENTTHREADED))) return 1;
  if (FAILED(CoCreateInstance(&CLSID_ShellLink, NULL, CLSCTX_INPROC_SERVER, &IID_IShellLinkW, (void **)&link))) return 1;
  if (FAILED(IShellLinkW_QueryInterface(link, &IID_IPersistFile, (void **)&file))) return 1;
  if (FAILED(IPersistFile_Load(file, argv[1], STGM_READ))) return 1;
  if (FAILED(IShellLinkW_GetPath(link, target, MAX_PATH, NULL, 0))) return 1;
  wprintf(L"%ls\n", target);
  return 0;
}

import { describe, expect, it } from "vitest";
import { deniedCommandReason } from "../../src/tools/command-deny-list.js";

const DENIED: [string, string][] = [
  // rm with recursive + force, in every spelling
  ["rm -rf /", '"rm" with -r and -f'],
  ["rm -rf build", '"rm" with -r and -f'],
  ["rm -fr build", '"rm" with -r and -f'],
  ["rm -r -f build", '"rm" with -r and -f'],
  ["rm -f -r build", '"rm" with -r and -f'],
  ["rm -Rf build", '"rm" with -r and -f'],
  ["rm -rfv build", '"rm" with -r and -f'],
  ["rm --recursive --force build", '"rm" with -r and -f'],
  ["rm --rec --fo build", '"rm" with -r and -f'],
  ["rm   -r    -f   build", '"rm" with -r and -f'],
  ["rm\t-rf\tbuild", '"rm" with -r and -f'],
  ["/bin/rm -rf x", '"rm" with -r and -f'],
  ["sudo rm -rf x", '"rm" with -r and -f'],
  ["\\rm -rf x", '"rm" with -r and -f'],
  ["r'm' -'rf' x", '"rm" with -r and -f'],
  ['"rm" "-rf" "x"', '"rm" with -r and -f'],
  ["rm${IFS}-rf${IFS}/", '"rm" with -r and -f'],
  ["{rm,-rf,/}", '"rm" with -r and -f'],
  ["echo hi; rm -rf x", '"rm" with -r and -f'],
  ["true&&rm -rf x", '"rm" with -r and -f'],
  ["ls | xargs rm -rf", '"rm" with -r and -f'],
  ["find . -name '*.o' -exec rm -rf {} +", '"rm" with -r and -f'],
  ["sh -c 'rm -rf /'", '"rm" with -r and -f'],
  ["bash -c \"cd /; rm -r -f *\"", '"rm" with -r and -f'],
  ["echo $(rm -rf x)", '"rm" with -r and -f'],
  ["echo `rm -rf x`", '"rm" with -r and -f'],
  ["ls\nrm -rf x", '"rm" with -r and -f'],
  // rm -r of the root, a system or home directory, or the whole tree
  ["rm -r /", '"rm -r /"'],
  ["rm -r /etc", '"rm -r /etc"'],
  ["rm -R ~", '"rm -r ~"'],
  ["rm -r $HOME", '"rm -r $HOME"'],
  ["rm -r -- /", '"rm -r /"'],
  ["rm -r .", '"rm -r ."'],
  ["rm -r *", '"rm -r *"'],
  ["rm --no-preserve-root -r /", '"rm -r /"'],
  ["rm --no-preserve-root x", "--no-preserve-root"],
  // file systems, partitions and devices
  ["mkfs /dev/sdb1", '"mkfs"'],
  ["mkfs.ext4 disk.img", '"mkfs.ext4"'],
  ["/sbin/mkfs.xfs -f image", '"mkfs.xfs"'],
  ["mke2fs image", '"mke2fs"'],
  ["mkswap swapfile", '"mkswap"'],
  ["wipefs -a image", '"wipefs"'],
  ["fdisk -l", '"fdisk"'],
  ["dd if=/dev/zero of=/dev/sda bs=1M", '"dd of=/dev/sda"'],
  ["cp image.iso /dev/sdc", "access to /dev/sdc"],
  ["dd if=x of=/dev/tty3", '"dd of=/dev/tty3"'],
  ["echo x > /dev/sda", "access to /dev/sda"],
  ["echo x >/dev/nvme0n1", "access to /dev/nvme0n1"],
  ["cat image > /dev/mmcblk0", "access to /dev/mmcblk0"],
  ["cat /dev/mem", "access to /dev/mem"],
  ["shred /dev/vda", "access to /dev/vda"],
  // system files
  ["echo x > /etc/passwd", "writing to /etc/passwd"],
  ["echo x >> /etc/cron.d/job", "writing to /etc/cron.d/job"],
  ["echo x >| /usr/bin/ls", "writing to /usr/bin/ls"],
  ["echo x 2>/boot/grub/grub.cfg", "writing to /boot/grub/grub.cfg"],
  ["echo key | sudo tee -a /root/.ssh/authorized_keys", "writing to /root/.ssh/authorized_keys"],
  ["echo '* * * * * x' > /var/spool/cron/crontabs/root", "writing to /var/spool/cron/crontabs/root"],
  // the machine itself
  ["shutdown -h now", '"shutdown"'],
  ["sudo reboot", '"reboot"'],
  ["halt", '"halt"'],
  ["poweroff --force", '"poweroff"'],
  ["systemctl reboot", '"systemctl reboot"'],
  ["systemctl --force poweroff", '"systemctl poweroff"'],
  ["init 0", '"init 0"'],
  ["telinit 6", '"telinit 6"'],
  ["kill -9 -1", '"kill … -1"'],
  ["kill -KILL -1", '"kill … -1"'],
  ["kill -s KILL -1", '"kill … -1"'],
  ["kill -- -1", '"kill … -1"'],
  ["killall5 -9", '"killall5"'],
  // fork bombs
  [":(){ :|:& };:", "a fork bomb"],
  [": ( ) { : | : & } ; :", "a fork bomb"],
  ["bomb() { bomb | bomb & }; bomb", "a fork bomb"],
  ["function f { f | f & }; f", "a fork bomb"],
  // permissions of the whole machine
  ["chmod -R 777 /", '"chmod" on /'],
  ["chmod 777 /", '"chmod" on /'],
  ["chmod -R 777 /*", '"chmod" on /'],
  ["chown -R nobody /etc", '"chown -R /etc"'],
  ["chgrp --recursive staff /usr", '"chgrp -R /usr"'],
  // system trees
  ["find / -delete", '"find / … -delete"'],
  ["mv /etc /tmp/etc.bak", '"mv /etc"'],
  ["mv ~ /dev/null", '"mv ~"'],
];

const ALLOWED = [
  "ls -la",
  "echo hello > out.txt",
  "rm build/a.o",
  "rm -f build/a.o",
  "rm -r build",
  "rm -i -r build",
  "mkdir -p a/b && touch a/b/c",
  "git status --short",
  "dd if=/dev/zero of=/dev/null bs=1k count=1",
  "dd if=/dev/zero of=blank.img bs=1k count=1",
  "head -c 10 /dev/urandom | od -An -tx1",
  "chmod -R 755 build",
  "chmod +x script.sh",
  "kill -1 1234",
  "kill 1234",
  "find . -name '*.tmp'",
  "find build -delete",
  "mv a.txt b.txt",
  "mv * out/",
  "npm init -y",
  "python3 -c 'print(1)'",
  "grep -n 'x' file.txt | sort | uniq -c",
  "echo 'a,b,c' | cut -d, -f2",
  "printf '%s\\n' 'halting problem'",
  "cat /dev/null",
  "cat /etc/os-release",
  "echo x > /tmp/scratch.txt",
  "echo x | tee out.log",
  "ls /usr/bin > bins.txt",
  "for i in 1 2 3; do echo $i; done",
  "f() { echo hi; }; f",
];

describe("run_command deny-list", () => {
  it.each(DENIED)("refuses %j", (command, what) => {
    const reason = deniedCommandReason(command);
    expect(reason).not.toBeNull();
    expect(reason).toContain(`refused: ${what} is on run_command's deny-list`);
  });

  it.each(ALLOWED)("lets %j go on (to approval)", (command) => {
    expect(deniedCommandReason(command)).toBeNull();
  });

  it("says it is policy, so the model does not retry", () => {
    expect(deniedCommandReason("rm -rf /")).toBe(
      'refused: "rm" with -r and -f is on run_command\'s deny-list of destructive commands (it deletes whole trees without asking (delete specific files instead)); this is policy, not a failure to retry',
    );
  });
});

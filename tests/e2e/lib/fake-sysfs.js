'use strict';
// A fake sysfs tree for the example PCI driver (tests/e2e/pci-driver.test.js,
// bench/run.js's "example" server).

const fs = require('node:fs');
const path = require('node:path');

// A fake sysfs: root/devices/pci0000:00/<addr> with the attribute files,
// root/bus/pci/devices/<addr> -> ../../../devices/pci0000:00/<addr>, as
// the kernel lays it out. dev: { addr, vendor, device, cls, numa
// (undefined: no file), driver (undefined: unbound), iommu, bars, physfn
// (an SR-IOV VF: its PF's address; the kernel's physfn -> ../<pf> link) }.
function addFakeDevice(root, dev) {
  const real = path.join(root, 'devices', 'pci0000:00', dev.addr);
  fs.mkdirSync(real, { recursive: true });
  const w = (f, v) => fs.writeFileSync(path.join(real, f), `${v}\n`);
  w('vendor', dev.vendor || '0x8086');
  w('device', dev.device || '0x1234');
  w('subsystem_vendor', dev.vendor || '0x8086');
  w('subsystem_device', '0x0001');
  w('class', dev.cls || '0x020000');
  if (dev.numa !== undefined) w('numa_node', dev.numa);
  if (dev.driver) fs.symlinkSync(`../../../bus/pci/drivers/${dev.driver}`, path.join(real, 'driver'));
  if (dev.iommu !== undefined) fs.symlinkSync(`../../../kernel/iommu_groups/${dev.iommu}`, path.join(real, 'iommu_group'));
  if (dev.physfn) fs.symlinkSync(`../${dev.physfn}`, path.join(real, 'physfn'));
  const bars = (dev.bars || []).map(([start, size]) => `0x${start.toString(16).padStart(16, '0')} 0x${(start + size - 1).toString(16).padStart(16, '0')} 0x0000000000040200`);
  while (bars.length < 13) bars.push('0x0000000000000000 0x0000000000000000 0x0000000000000000');
  w('resource', bars.join('\n'));
  const bus = path.join(root, 'bus', 'pci', 'devices');
  fs.mkdirSync(bus, { recursive: true });
  fs.symlinkSync(`../../../devices/pci0000:00/${dev.addr}`, path.join(bus, dev.addr));
}

function removeFakeDevice(root, addr) {
  fs.rmSync(path.join(root, 'bus', 'pci', 'devices', addr), { force: true });
  fs.rmSync(path.join(root, 'devices', 'pci0000:00', addr), { recursive: true, force: true });
}

function fakeSysfs(dir, devices) {
  const root = path.join(dir, 'sys');
  for (const d of devices) addFakeDevice(root, d);
  // Odd entries that are not PCI functions: skipped.
  fs.writeFileSync(path.join(root, 'bus', 'pci', 'devices', 'README'), 'not a device\n');
  fs.mkdirSync(path.join(root, 'bus', 'pci', 'devices', '0000:zz:00.0'));
  return root;
}

module.exports = { addFakeDevice, removeFakeDevice, fakeSysfs };

/**
 * The hardware driver seam. Berth keeps node state as bookkeeping; every hardware
 * action goes through a driver, and the default one — like Ironic's fake-hardware
 * type — does nothing (power_state becomes whatever was asked, deploys succeed).
 * A real driver (IPMI, Redfish) would implement the same interface; the node-action
 * state machine calls it between the provision state transitions.
 */
import type { INTERFACES, NodeRecord } from '../core/baremetal/records.js';
import { powerResult } from '../core/baremetal/states.js';
import { config } from '../config.js';

export type InterfaceName = (typeof INTERFACES)[number];

/**
 * An error a driver raises for the node's user (a BMC that refused, a timeout): its
 * message becomes the node's last_error. Any other error in a node action is logged
 * under the execution id, and last_error says only that (core/baremetal/errors.ts).
 */
export class HardwareError extends Error {
  override name = 'HardwareError';
}

export interface HardwareDriver {
  name: string;
  /** default interface per kind for new nodes */
  defaults: Record<InterfaceName, string>;
  /** the interface implementations a node of this type may use */
  enabled: Record<InterfaceName, readonly string[]>;
  /** the driver_info properties the type reads, with a description (GET /v1/drivers/{name}/properties) */
  properties: Record<string, string>;
  verify(node: NodeRecord): Promise<void>;
  clean(node: NodeRecord): Promise<void>;
  deploy(node: NodeRecord): Promise<void>;
  tearDown(node: NodeRecord): Promise<void>;
  inspect(node: NodeRecord): Promise<void>;
  adopt(node: NodeRecord): Promise<void>;
  rescue(node: NodeRecord): Promise<void>;
  unrescue(node: NodeRecord): Promise<void>;
  /** perform a power action; returns the resulting power state */
  setPower(node: NodeRecord, target: string): Promise<string>;
  /**
   * true when setPower has nothing to wait for: the conductor then applies it within the
   * API request, so its result is stored before the 202 (a real driver answers false)
   */
  instantPower(): boolean;
}

const noop = async () => {
  const ms = config().baremetal.fakeDelayMs;
  if (ms > 0) await new Promise((r) => setTimeout(r, ms));
};

/** the fake-hardware type with the reference Ironic's enabled interfaces */
export const FAKE_HARDWARE: HardwareDriver = {
  name: 'fake-hardware',
  defaults: {
    bios: 'fake',
    boot: 'fake',
    console: 'fake',
    deploy: 'fake',
    inspect: 'fake',
    management: 'fake',
    network: 'noop',
    power: 'fake',
    raid: 'fake',
    rescue: 'fake',
    storage: 'noop',
    vendor: 'fake',
  },
  enabled: {
    bios: ['fake', 'no-bios'],
    boot: ['fake'],
    console: ['fake', 'no-console'],
    deploy: ['fake'],
    inspect: ['fake', 'no-inspect'],
    management: ['fake'],
    network: ['noop'],
    power: ['fake'],
    raid: ['fake', 'no-raid'],
    rescue: ['fake', 'no-rescue'],
    storage: ['noop'],
    vendor: ['fake', 'no-vendor'],
  },
  // there is no hardware to reach: no driver_info is read
  properties: {},
  verify: noop,
  clean: noop,
  deploy: noop,
  tearDown: noop,
  inspect: noop,
  adopt: noop,
  rescue: noop,
  unrescue: noop,
  async setPower(_node, target) {
    await noop();
    return powerResult(target);
  },
  // fake hardware made slow on purpose (BAREMETAL_FAKE_DELAY_MS) behaves like real hardware
  instantPower: () => config().baremetal.fakeDelayMs === 0,
};

const DRIVERS = new Map<string, HardwareDriver>([[FAKE_HARDWARE.name, FAKE_HARDWARE]]);

/** Register another hardware type (a real driver, or a test double). */
export function registerDriver(d: HardwareDriver): void {
  DRIVERS.set(d.name, d);
}

/** The enabled hardware types (BAREMETAL_ENABLED_DRIVERS, default fake-hardware). */
export function enabledDrivers(): string[] {
  return config().baremetal.enabledDrivers.filter((n) => DRIVERS.has(n));
}

export function driverFor(name: string): HardwareDriver | undefined {
  return enabledDrivers().includes(name) ? DRIVERS.get(name) : undefined;
}

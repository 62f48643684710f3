import { z } from 'zod';
import { ConditionSchema } from './conditions.js';

// The status fields every resource the controller projects has: what generation it acted on, its conditions
// (Enforced), and the ZedToken of its last SpiceDB write. `kind` names the object in the descriptions.

export function projectedStatusFields(kind: string) {
  return {
    observedGeneration: z
      .int()
      .min(0)
      .meta({ format: 'int64' })
      .optional()
      .describe('The metadata.generation that the controller last acted on.'),
    conditions: z
      .array(ConditionSchema)
      .meta({ 'x-kubernetes-list-type': 'map', 'x-kubernetes-list-map-keys': ['type'] })
      .optional()
      .describe(`Observations of the ${kind}; type Enforced tells whether SpiceDB enforces it.`),
    zedToken: z
      .string()
      .optional()
      .describe(`SpiceDB consistency token (ZedToken) of the last write for the ${kind}.`),
  };
}
